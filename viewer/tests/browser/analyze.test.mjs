// Browser tests of analysis in the page (the analysis module, viewer/analyze/), run by
// `cargo xtask test` next to viewer.test.mjs: logs and traces dropped or opened on the
// static page are read and diagnosed there, the rules re-run on a report, and a file gpuwhy
// does not read gets a clear message. GPUWHY_VIEWER_SITE is the built static page,
// GPUWHY_VIEWER_FIXTURES the directory with cargo xtask's demo report.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FIX, dmonLog, drop, fixture, viewerSuite } from './suite.mjs';

const CORE_FIX = fileURLToPath(new URL('../../../core/tests/fixtures/', import.meta.url));
const demo = fixture('demo.json');

// An `nvidia-smi --query-gpu=... --format=csv -l 1` log of one GPU, the same busy/idle shape.
function csvLog(samples) {
  let s = 'timestamp, index, name, utilization.gpu [%], utilization.memory [%], memory.used [MiB], memory.total [MiB], power.draw [W], power.limit [W]\n';
  for (let i = 0; i < samples; i++) {
    const busy = i % 10 < 6;
    const t = new Date(Date.UTC(2026, 10, 29, 11, 22, 0) + i * 1000).toISOString();
    const stamp = `${t.slice(0, 10).replaceAll('-', '/')} ${t.slice(11, 23)}`;
    s += `${stamp}, 0, NVIDIA H100 80GB HBM3, ${busy ? 97 : 2} %, ${busy ? 45 : 1} %, 30000 MiB, 81559 MiB, ${busy ? '610.00' : '120.00'} W, 700.00 W\n`;
  }
  return s;
}

const suite = viewerSuite();
const { open } = suite;

const message = (page) => page.textContent('#message');

describe('analysis on the static page', () => {
  test('a dropped dmon log is diagnosed, with a verdict naming its source and a timeline per GPU', async () => {
    const { page, errors, fetched } = await open(`${suite.base}/index.html`);
    assert.ok(!fetched.some((p) => p.includes('analyze')), 'nothing of the analysis is fetched up front');
    const state = await drop(page, 'run.log', dmonLog(120, 2));
    assert.equal(state, 'ready', await message(page));
    assert.ok(fetched.includes('/gpuwhy_analyze_bg.wasm'), 'the analysis module was loaded on demand');
    assert.equal(await page.textContent('.verdict-title'), 'GPU waits for input data');
    const summary = await page.textContent('.verdict-summary');
    assert.match(summary, /From an nvidia-smi dmon log \(run\.log\), analysed in this browser: 120 samples per GPU, 2 GPUs, 1 s apart\./);
    assert.ok(await page.locator('article.finding').count() >= 1);
    assert.equal(await page.locator('figure.gpu-timeline .svg svg').count(), 2);
    assert.equal(await page.locator('figure.heatmap svg').count(), 1, 'two GPUs get the heatmap');
    assert.ok(await page.isVisible('#analysis-notes'));
    assert.match(await page.textContent('#analysis-notes'), /Read from run\.log:[\s\S]*no time column/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a query-gpu CSV log opened with the file picker is diagnosed', async () => {
    const { page, errors } = await open(`${suite.base}/index.html`);
    await page.evaluate(() => { document.body.dataset.state = 'picking'; });
    await page.setInputFiles('#file', { name: 'gpu.csv', mimeType: 'text/csv', buffer: Buffer.from(csvLog(90)) });
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state));
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await message(page));
    assert.match(await page.textContent('.verdict-summary'),
      /From an nvidia-smi --query-gpu CSV log \(gpu\.csv\), analysed in this browser: 90 samples per GPU, 1 GPU, 1 s apart\./);
    assert.ok((await page.textContent('.verdict-title')).length > 0);
    assert.equal(await page.locator('figure.gpu-timeline .svg svg').count(), 1);
    assert.match(await page.textContent('figure.gpu-timeline figcaption'), /NVIDIA H100 80GB HBM3/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a gzip-compressed profiler trace is diagnosed', async () => {
    const { page, errors } = await open(`${suite.base}/index.html`);
    const gz = [...readFileSync(join(CORE_FIX, 'trace/small.json.gz'))];
    const state = await drop(page, 'small.json.gz', gz);
    assert.equal(state, 'ready', await message(page));
    assert.equal(await page.textContent('.verdict-title'), 'Host syncs every step stall the GPU');
    assert.match(await page.textContent('.verdict-summary'), /From a PyTorch profiler trace \(small\.json\.gz\), analysed in this browser: rank 0, \d+ events, 15 kernels/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('"Re-run the rules" runs them again on the report shown', async () => {
    const { page, errors, fetched } = await open(`${suite.base}/index.html?url=/fixtures/demo.json`);
    assert.equal(await page.textContent('.verdict-title'), demo.verdict.title);
    assert.ok(await page.isHidden('#analysis-notes'));
    assert.ok(!fetched.some((p) => p.includes('analyze')), 'a report alone loads no analysis');
    await page.evaluate(() => { document.body.dataset.state = 'rerun'; });
    await page.click('#rerun');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 60000 });
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', await message(page));
    assert.match(await page.textContent('.verdict-summary'), /Rules re-run in this browser by gpuwhy [\d.]+ on the samples of demo\.json/);
    assert.ok(await page.isHidden('#analysis-notes'), 'a report read back has nothing to note');
    assert.equal(await page.locator('figure.gpu-timeline').count(), demo.series.length);
    assert.ok(await page.locator('article.finding').count() >= 1);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a file gpuwhy does not read gets a clear message naming where it went wrong', async () => {
    const { page, errors } = await open(`${suite.base}/index.html`);
    const state = await drop(page, 'photo.png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    assert.equal(state, 'error');
    assert.ok(await page.isHidden('#report'));
    assert.match(await page.textContent('#message h2'), /not a file gpuwhy reads/);
    assert.match(await message(page), /photo\.png: byte 0 is not UTF-8 text[\s\S]*nvidia-smi dmon/);

    // One damaged row is read past with a note; three of five make it no log gpuwhy reads.
    const bad = dmonLog(5, 1).split('\n');
    for (const i of [4, 5, 6]) bad[i] = '    0    abc    51      -     97';
    assert.equal(await drop(page, 'bad.log', bad.join('\n')), 'error');
    assert.match(await page.textContent('#message h2'), /dmon log cannot be read/);
    assert.match(await message(page), /bad\.log: line 5/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a file name with markup stays text', async () => {
    const { page, errors } = await open(`${suite.base}/index.html`);
    const name = '<img src=x onerror="window.__gpuwhyPwned=1">.log';
    assert.equal(await drop(page, name, 'hello\nworld\n'), 'error');
    await page.waitForTimeout(200);
    assert.equal(await page.evaluate(() => window.__gpuwhyPwned), undefined);
    assert.equal(await page.locator('img').count(), 0);
    assert.ok((await message(page)).includes(name));
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('JSON that is not a report keeps the viewer\'s reason', async () => {
    const { page } = await open(`${suite.base}/index.html?url=/fixtures/not-report.json`);
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'error');
    assert.match(await message(page), /not a gpuwhy report/);
    await page.close();
  });
});

describe('the single-file export', () => {
  test('has no analysis by default: the button is hidden and a dropped log keeps the viewer\'s reason', async () => {
    const { page, errors } = await open(pathToFileURL(join(FIX, 'demo.html')).href);
    assert.equal(await page.textContent('.verdict-title'), demo.verdict.title);
    assert.ok(await page.isHidden('#rerun'));
    assert.equal(await drop(page, 'run.log', dmonLog(10, 1)), 'error');
    assert.match(await message(page), /run\.log is not JSON/);
    assert.match(await message(page), /write it with `gpuwhy view --with-analysis`/);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
