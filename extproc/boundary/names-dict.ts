/**
 * The dictionaries of the name detector (`names.ts`), written into the repository by hand.
 * Sources, all public domain:
 *  - English given names: among the most frequent baby names in the US Social Security
 *    Administration's national lists (ssa.gov/oact/babynames), 1960–2020, women's and men's;
 *    names that are as often ordinary words, places or brands (Will, Grace, Paris, Jordan, Austin,
 *    Virginia, Georgia, Victoria, Mercedes, Chase, Miles) are left out on purpose.
 *  - English surnames: among the most frequent in the US Census Bureau's 2010 surname list
 *    (census.gov, "Frequently Occurring Surnames from the 2010 Census").
 *  - Chinese surnames: the common single and compound surnames of the 百家姓 (Song dynasty), as
 *    listed in its text, and 肖 (today's common form of 萧); the compound ones are matched first.
 * Each is a set of words; sizes are kept small on purpose (a hit is a cue, not proof).
 */

export const GIVEN_NAMES: ReadonlySet<string> = new Set(
  (
    "James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew Anthony Mark Donald " +
    "Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward Jason Jeffrey Ryan Jacob Gary Nicholas Eric " +
    "Jonathan Stephen Larry Justin Scott Brandon Benjamin Samuel Gregory Alexander Frank Patrick Raymond Jack Dennis Jerry " +
    "Tyler Aaron Henry Adam Douglas Nathan Peter Zachary Kyle Noah Ethan Jeremy Walter Christian Keith Roger Terry Harold " +
    "Sean Carl Arthur Lawrence Dylan Jesse Bryan Joe Gabriel Logan Alan Juan Albert Elijah Randy Wayne Roy Ralph Eugene " +
    "Liam Oliver Lucas Mason Aiden Owen Wyatt Carter Julian Luke Isaac Levi Sebastian Mateo Hudson Leo Ezra " +
    "Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty Sandra Margaret Ashley " +
    "Kimberly Emily Donna Michelle Carol Amanda Melissa Deborah Stephanie Dorothy Rebecca Sharon Laura Cynthia Amy Kathleen " +
    "Angela Shirley Brenda Emma Anna Pamela Nicole Samantha Katherine Christine Helen Debra Rachel Carolyn Janet Maria " +
    "Catherine Heather Diane Olivia Julie Joyce Ruth Kelly Lauren Christina Joan Evelyn Judith Andrea Hannah " +
    "Megan Cheryl Jacqueline Martha Madison Teresa Gloria Sara Janice Ann Kathryn Abigail Sophia Frances Jean Alice Judy " +
    "Isabella Julia Beverly Denise Marilyn Amber Danielle Brittany Diana Natalie Mia Charlotte Amelia Harper Ava Ella " +
    "Chloe Zoe Lily Nora Hazel Aria Scarlett Layla Penelope Riley Stella Violet Aurora Ellie Lucy Claire Anne Alex " +
    "Wei Li Ming Jun Hui Yan Xin Lei Fang Jing"
  ).split(" "),
);

export const SURNAMES: ReadonlySet<string> = new Set(
  (
    "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson Anderson " +
    "Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young " +
    "Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter " +
    "Roberts Gomez Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy Cook Rogers " +
    "Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox Ward Richardson Watson Brooks Chavez " +
    "Wood James Bennett Gray Mendoza Ruiz Hughes Price Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez " +
    "Powell Jenkins Perry Russell Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero " +
    "Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole Hayes Bryant Herrera Gibson " +
    "Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall Owens Harrison Fernandez McDonald Woods Washington " +
    "Kennedy Wells Vargas Henry Chen Freeman Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez " +
    "Silva Shaw Snyder Mason Dixon Munoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone Salazar Fox " +
    "Warren Mills Meyer Rice Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Grant Dunn " +
    "Wang Zhang Liu Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Lin Gao Luo Zheng Liang Xie Song Tang Han Feng Deng " +
    "Cao Peng Zeng Xiao Tian Dong Pan Yuan Cai Jiang Yu Du Ye Cheng Wei Su Lu Ding Ren Shen Yao Lu Jiang Cui Zhong Tan " +
    "Wong Chan Leung Cheung Lau Ho Ng Chow Yip Tsang Lam Yeung Park Choi Jung Kang Cho Yoon Tanaka Suzuki Sato Takahashi"
  ).split(" "),
);

/** Capitalised words that follow a given name without making it a person's (places, brands, products, calendar). */
export const NOT_SURNAMES: ReadonlySet<string> = new Set(
  (
    "Street Avenue Road Lane Drive Boulevard Park Square Bridge Station Airport Hospital University College School " +
    "Company Corp Inc Ltd Group Bank Brand Motors Motor Studio Studios Pro Max Plus Air Mini Edition Series Cloud " +
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August " +
    "September October November December Christmas Day Week Team Support Office Project Service Services Center " +
    "New America York House Jersey Zealand Universe World"
  ).split(" "),
);

/** Chinese compound surnames (matched before single ones). */
export const CN_COMPOUND_SURNAMES: readonly string[] = "欧阳 司马 诸葛 上官 东方 皇甫 尉迟 公孙 慕容 令狐 长孙 宇文 司徒 夏侯 轩辕 端木".split(" ");

/** Chinese single surnames: the common ones of the 百家姓. */
export const CN_SURNAMES: string =
  "赵钱孙李周吴郑王冯陈褚卫蒋沈韩杨朱秦尤许何吕施张孔曹严华金魏陶姜戚谢邹喻柏窦章云苏潘葛范彭郎鲁韦昌马苗凤花方俞任袁柳" +
  "鲍史唐费廉岑薛雷贺倪汤滕殷罗毕郝邬安常乐于时傅皮卞齐康伍余元卜顾孟黄和穆萧尹姚邵汪祁毛禹狄米贝明臧计伏成戴谈宋茅庞" +
  "熊纪舒屈项祝董梁杜阮蓝闵席季麻强贾路娄危江童颜郭梅盛林刁钟徐邱骆高夏蔡田樊胡凌霍虞万支柯管卢莫房裘缪解应宗丁宣邓" +
  "郁单杭洪包诸左石崔吉龚程邢裴陆荣翁荀惠甄曲封储靳段焦巴牧山谷车侯全班仰秋仲伊宫宁仇栾暴甘厉戎祖武符刘景詹龙叶幸司" +
  "黎溥印白怀蒲邰从鄂索咸赖卓蔺屠蒙池乔阳胥能苍双闻莘党翟谭贡劳姬申扶堵冉宰郦雍桑桂濮牛寿通边扈燕冀郏浦尚农温别庄晏柴" +
  "瞿阎连习艾鱼容向古易慎戈廖庾终居衡步都耿满弘匡国文寇广禄阙东欧沃利蔚越隆师巩聂晁勾敖融冷訾辛阚那简饶曾沙养鞠须丰巢" +
  "关蒯相查后荆红游竺权逯盖益桓公肖";

/** Chinese cities and provinces that may open a street address (the address detector's anchor). */
export const CN_PLACES: readonly string[] = (
  "北京 上海 天津 重庆 广州 深圳 杭州 南京 苏州 成都 武汉 西安 长沙 郑州 青岛 厦门 宁波 大连 沈阳 哈尔滨 长春 济南 合肥 " +
  "福州 南昌 昆明 贵阳 南宁 海口 石家庄 太原 呼和浩特 兰州 西宁 银川 乌鲁木齐 拉萨 无锡 佛山 东莞 珠海 温州 " +
  "广东 江苏 浙江 山东 河南 河北 湖南 湖北 四川 福建 安徽 江西 辽宁 吉林 黑龙江 云南 贵州 广西 海南 山西 陕西 甘肃 香港 台北"
).split(" ");
