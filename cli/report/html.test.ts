/**
 * The HTML report as a person sees it: Debian's Chromium (headless, through playwright-core)
 * opens the file offline; each chart must show the number of marks its data in report.json
 * calls for, the console must stay free of errors, and nothing may be fetched. A screenshot is
 * kept in test-artifacts/report.png.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium, type BrowserContext } from "playwright-core";
import { LATENCY_GROUPS, type ReportData } from "./report-data.ts";
import { writeReport } from "./main.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = fileURLToPath(new URL("../../test-artifacts/", import.meta.url));
const dir = mkdtempSync(path.join(tmpdir(), "gearbox-report-html-"));
let browser: BrowserContext | undefined;

const T0 = Date.parse("2025-06-01T10:00:00Z");

/** 300 requests over 30 minutes: edge (some upgraded), cloud (some streamed), cache hits, 429s and 502s, two tenants. */
function syntheticLog(): string {
  const lines: string[] = ["gearbox serve: config (none found: embedded defaults)"];
  for (let i = 0; i < 300; i++) {
    const base = {
      level: 30,
      time: new Date(T0 + i * 6000).toISOString(),
      request_id: `r${i}`,
      tenant: i % 3 === 0 ? "acme" : "shop",
      model: i % 5 === 0 ? "gpt-4o" : "gpt-4o-mini",
      msg: "request",
    };
    const k = i % 10;
    const row =
      k < 3
        ? {
            route: "edge",
            cache: "miss",
            status: 200,
            duration_ms: 80 + k,
            cost_usd: 0,
            cloud_cost_avoided_usd: 0.001,
            cascade: { edge_confidence: 0.7 + k / 10, upgraded: false },
          }
        : k === 3
          ? {
              route: "cloud",
              cache: "miss",
              status: 200,
              duration_ms: 400,
              cost_usd: 0.002,
              cascade: { edge_confidence: 0.2, upgraded: true, upgrade_reason: "low_confidence:0.2<0.6" },
            }
          : k < 7
            ? {
                route: "cloud",
                cache: "miss",
                status: 200,
                stream: true,
                duration_ms: 250,
                ttft_ms: 60,
                cost_usd: 0.002,
                ...(k === 6 && { fallback: "openai:503>deepseek" }),
              }
            : k === 7
              ? {
                  route: "cache",
                  cache: "hit",
                  cache_layer: i % 20 === 7 ? "semantic" : "exact",
                  status: 200,
                  duration_ms: 3,
                  cost_usd: 0,
                  cloud_cost_avoided_usd: 0.002,
                }
              : k === 8
                ? { cache: "miss", status: 429, error_code: "rate_limit_requests_per_second", duration_ms: 1 }
                : { cache: "miss", status: 502, error_code: "upstream_error", duration_ms: 30 };
    lines.push(JSON.stringify({ ...base, ...row }));
  }
  return lines.join("\n") + "\n";
}

/** The marks each chart must show, from the report's numbers (not from the chart code). */
function expectedMarks(d: ReportData): Record<string, number> {
  const served = LATENCY_GROUPS.filter((g) => d.latency[g].count > 0).length;
  const streamed = LATENCY_GROUPS.filter((g) => d.ttft[g].count > 0).length;
  return {
    requests: d.time_series.length * 4,
    "edge-share": d.time_series.filter((b) => b.edge_share !== null).length,
    cost: 2,
    cache: 2,
    upgrades: Object.keys(d.cascade.upgrade_reasons).length + Object.keys(d.fallback.reasons).length + Object.keys(d.fallback.degraded).length,
    confidence: 40,
    latency: served * 3,
    "latency-distribution": served * 12,
    ttft: streamed * 3,
    errors: Object.keys(d.errors.by_cause).length,
  };
}

before(async () => {
  if (!existsSync(CHROMIUM)) return;
  // A fresh profile (playwright passes it to Chromium as --user-data-dir).
  browser = await chromium.launchPersistentContext(mkdtempSync(path.join(tmpdir(), "gearbox-chromium-")), {
    executablePath: CHROMIUM,
    viewport: { width: 1200, height: 900 },
    offline: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
});

test(
  "Chromium shows every chart with the marks its numbers call for, no console error, nothing fetched",
  { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (.ci/run installs Debian's chromium)` },
  async () => {
    const log = path.join(dir, "requests.log");
    writeFileSync(log, syntheticLog());
    const out = path.join(dir, "report");
    const { html, data } = await writeReport({ files: [log], out, filters: {} });
    assert.equal(data.requests.total, 300);
    const page = await browser!.newPage();
    const problems: string[] = [];
    const fetched: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("request", (r) => {
      if (r.url() !== pathToFileURL(html).href) fetched.push(r.url());
    });
    await page.goto(pathToFileURL(html).href, { waitUntil: "load" });
    // Runs in the page (the project's TypeScript has no DOM types: the script is a string).
    const charts = await page.evaluate<{ id: string; marks: number; visible: boolean }[]>(`[...document.querySelectorAll("figure.chart")].map((f) => {
    const mark = f.getAttribute("data-mark") ?? "";
    const svg = f.querySelector("svg");
    const box = svg?.getBoundingClientRect();
    return {
      id: f.getAttribute("data-chart") ?? "",
      marks: svg ? svg.querySelectorAll("g.mark-" + mark + ".role-mark > path").length : -1,
      visible: box !== undefined && box.width > 100 && box.height > 50,
    };
  })`);
    const expected = expectedMarks(data);
    assert.deepEqual(
      charts.map((c) => c.id),
      Object.keys(expected),
    );
    for (const c of charts) {
      assert.equal(c.marks, expected[c.id], `chart ${c.id}: ${c.marks} marks, ${expected[c.id]} expected`);
      assert.ok(c.visible, `chart ${c.id} is not visible`);
    }
    const tenants = await page.evaluate<string[]>(`[...document.querySelectorAll("section[data-table=tenant] tbody th")].map((th) => th.textContent)`);
    assert.deepEqual(tenants, ["shop", "acme"]);
    assert.match((await page.textContent(".answers")) ?? "", /saved/);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, "report.png"), fullPage: true });
    assert.deepEqual(problems, []);
    assert.deepEqual(fetched, []);
    await page.close();
  },
);
