// `cargo xtask bench` (viewer): render time of a long report in headless Chromium, and the
// WebAssembly module's gzipped size. Usage: node bench.mjs SITE_DIR REPORT.json MODULE.wasm
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launch, serve, settled } from './common.mjs';

const [site, report, wasm] = process.argv.slice(2);
const { server, base } = await serve({ '/data/': dirname(report), '/': site });
const browser = await launch();
const runs = [];
for (let i = 0; i < 3; i++) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  await page.goto(`${base}/index.html?url=/data/${basename(report)}`);
  const state = await settled(page, 120000);
  if (state !== 'ready') throw new Error(`the report did not render: ${await page.textContent('#message')}`);
  await page.waitForFunction(() => performance.getEntriesByName('gpuwhy-painted').length > 0);
  runs.push(await page.evaluate(() => {
    const at = (n) => performance.getEntriesByName(n)[0].startTime;
    return { parse: at('gpuwhy-parsed') - at('gpuwhy-open'), draw: at('gpuwhy-rendered') - at('gpuwhy-parsed'), paint: at('gpuwhy-painted') - at('gpuwhy-rendered') };
  }));
  await page.close();
}
await browser.close();
server.close();
const med = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[1];
const raw = statSync(wasm).size;
const gz = gzipSync(readFileSync(wasm), { level: 9 }).length;
const mb = (statSync(report).size / 1e6).toFixed(1);
console.log(`viewer: ${basename(report)} (${mb} MB of JSON), headless Chromium, median of ${runs.length}`);
console.log(`  read the report (JSON → model, in wasm) : ${med('parse').toFixed(0)} ms`);
console.log(`  draw every section (wasm + DOM insert)  : ${med('draw').toFixed(0)} ms`);
console.log(`  layout and paint                        : ${med('paint').toFixed(0)} ms`);
const total = med('parse') + med('draw') + med('paint');
console.log(`  total, report bytes to pixels           : ${total.toFixed(0)} ms (goal ≤ 500 ms)`);
console.log(`  wasm module: ${(raw / 1000).toFixed(0)} kB raw, ${(gz / 1000).toFixed(1)} kB gzipped (goal ≤ 150 kB)`);
