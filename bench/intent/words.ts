/**
 * Word lists for the synthetic part of the intent dataset (`templates.ts`). Written by hand for
 * Gearbox; nothing here is copied from a dataset.
 */

export const WORDS: Record<string, readonly string[]> = {
  lang: ["French", "English", "German", "Spanish", "Chinese", "Japanese", "Korean", "Italian", "Russian", "Portuguese", "Arabic", "Dutch", "Vietnamese", "Thai", "Turkish"],
  zhLang: ["英文", "英语", "中文", "日语", "法语", "德语", "西班牙语", "韩语", "俄语", "意大利语", "葡萄牙语", "粤语", "文言文"],
  entity: ["person names", "dates", "locations", "organizations", "company names", "email addresses", "phone numbers", "product names", "amounts of money", "city names", "people and places", "drug names", "addresses"],
  zhEntity: ["人名", "地名", "机构名", "公司名", "日期", "时间", "金额", "电话号码", "邮箱地址", "产品名称", "药品名称", "组织名称"],
  cats: ["billing, technical support, sales, other", "positive, negative, neutral", "sports, politics, technology, entertainment", "complaint, question, praise, request", "urgent, normal, low priority", "spam, not spam", "refund, shipping, account, cancel"],
  zhCats: ["账单、技术支持、销售、其他", "正面、负面、中性", "体育、政治、科技、娱乐", "投诉、咨询、表扬、建议", "退款、物流、账户、取消订单", "垃圾信息、正常信息"],
  tone: ["more formal", "more casual", "shorter", "clearer", "more polite", "more persuasive", "friendlier", "more professional", "less aggressive", "simpler for a child"],
  zhTone: ["更正式", "更口语化", "更简洁", "更通顺", "更礼貌", "更有说服力", "更专业", "更委婉", "更生动"],
  pl: ["Python", "JavaScript", "TypeScript", "Java", "C++", "Go", "Rust", "C#", "Ruby", "PHP", "Kotlin", "Swift", "Bash", "SQL"],
  codeTask: [
    "reverses a linked list", "checks whether a string is a palindrome", "parses a CSV file and sums a column", "returns the nth prime number",
    "merges two sorted arrays", "debounces another function", "validates an IPv4 address", "computes the Levenshtein distance between two strings",
    "flattens a nested list", "reads a JSON config file with defaults", "retries an HTTP request with exponential backoff", "counts word frequencies in a file",
    "implements an LRU cache", "finds duplicate files in a directory", "serializes a binary tree", "groups records by key and averages a field",
    "converts Roman numerals to integers", "rate limits calls with a token bucket", "deep clones an object", "finds the shortest path in a grid",
  ],
  zhCodeTask: [
    "反转链表", "判断字符串是否是回文", "读取CSV文件并对某一列求和", "求第n个质数", "合并两个有序数组", "实现防抖函数", "校验IPv4地址",
    "计算两个字符串的编辑距离", "把嵌套列表展平", "实现LRU缓存", "统计文件中的词频", "带指数退避的HTTP重试", "二叉树的序列化", "快速排序", "二分查找",
  ],
  form: ["short story", "poem", "haiku", "sonnet", "limerick", "song", "bedtime story", "fable", "rap verse", "fairy tale", "scene for a play", "flash fiction piece"],
  zhForm: ["诗", "七言绝句", "现代诗", "短篇故事", "童话", "散文", "歌词", "寓言故事", "微小说", "剧本片段"],
  topic: ["the ocean", "a lonely robot", "autumn leaves", "a lost cat", "the first day of school", "a dragon who is afraid of fire", "city lights at night", "friendship", "a time traveler", "the moon", "a haunted lighthouse", "coffee", "an old bookstore", "winter mornings", "a detective in Shanghai"],
  zhTopic: ["大海", "孤独的机器人", "秋天的落叶", "走丢的小猫", "开学第一天", "怕火的龙", "城市夜景", "友情", "时间旅行者", "月亮", "故乡", "一杯咖啡", "旧书店", "冬天的早晨", "春节回家"],
  writing: ["blog post", "essay", "speech", "formal email", "cover letter", "product launch announcement", "movie review", "newsletter", "wedding toast", "press release", "resignation letter", "travel blog post", "LinkedIn post"],
  zhWriting: ["文章", "演讲稿", "邮件", "求职信", "推荐信", "影评", "新闻稿", "祝酒词", "朋友圈文案", "公众号推文", "道歉信"],
  role: ["medieval knight", "pirate captain", "space colonist on Mars", "famous chef", "detective", "time traveler from the year 3000", "tour guide in Rome", "wizard", "sports commentator", "startup founder pitching investors"],
  person: ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Oscar"],
  zhPerson: ["小明", "小红", "小刚", "小丽", "张三", "李四", "王五", "赵六", "老王", "小张"],
  thing: ["piano tuners", "golf balls", "gas stations", "dentists", "trees", "coffee cups sold each day", "taxis", "hairs on a human head", "bricks in a skyscraper", "smartphones"],
  place: ["Chicago", "New York", "London", "a school bus", "Tokyo", "the United States", "a football stadium", "Shanghai", "Paris", "Beijing"],
  zhThing: ["钢琴调音师", "加油站", "出租车", "咖啡店", "共享单车", "外卖订单", "高楼", "快递"],
  zhPlace: ["北京", "上海", "深圳", "杭州", "成都", "广州", "一个足球场", "全中国"],
  event: ["the printing press", "the steam engine", "World War I", "the Internet", "the fall of Rome", "the moon landing", "antibiotics", "the telephone"],
  zhEvent: ["造纸术", "蒸汽机", "互联网", "印刷术", "工业革命", "登月", "青霉素", "电话"],
  product: ["laptops", "electric cars", "databases", "cloud providers", "programming languages", "phones", "vacation destinations", "mortgage options"],
  x: ["PostgreSQL", "the iPhone 15", "Python", "Tesla Model 3", "AWS", "Kyoto", "a Roth IRA", "React", "Rust", "a fixed-rate mortgage"],
  y: ["MySQL", "the Pixel 8", "Go", "BYD Seal", "Azure", "Osaka", "a traditional IRA", "Vue", "C++", "a variable-rate mortgage"],
  smallTalkEn: [
    "I'm feeling a bit down today", "what did you do this weekend?", "do you like music?", "what's your favorite movie?", "tell me something fun",
    "I just got a new puppy!", "are you a real person?", "I'm so tired after work", "do you ever sleep?", "what do you like to do for fun?",
    "it's raining again here", "I passed my exam today!", "can we just chat for a bit?", "do you have feelings?", "you're pretty smart",
    "I can't sleep", "guess what happened to me today", "what's your favorite food?", "I'm bored, talk to me", "do you dream?",
  ],
  smallTalkZh: [
    "今天心情不太好", "周末你都干嘛了", "你喜欢听音乐吗", "你最喜欢什么电影", "跟我聊聊天吧", "我刚养了一只小狗", "你是真人吗", "下班好累啊",
    "你会睡觉吗", "今天又下雨了", "我考试通过了！", "你有感情吗", "你好聪明啊", "睡不着怎么办呀", "猜猜我今天遇到了什么", "你喜欢吃什么", "好无聊啊陪我说说话", "你会做梦吗",
  ],
  greetEn: ["hi", "hello", "hey", "good morning", "good evening", "hey there", "hiya", "yo", "howdy", "hello again"],
  greetZh: ["你好", "您好", "嗨", "哈喽", "早上好", "晚上好", "在吗", "hi"],
};

export function words(name: string): readonly string[] {
  const list = WORDS[name];
  if (!list) throw new Error(`Unknown word list '${name}'.`);
  return list;
}
