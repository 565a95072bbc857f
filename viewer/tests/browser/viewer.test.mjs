// Browser tests of the report viewer, run by `cargo xtask test` (node --test) against
// Debian's Chromium. GPUWHY_VIEWER_SITE is the built static page, GPUWHY_VIEWER_FIXTURES
// the reports and single-file pages `cargo xtask` prepared (demo, hostile, invalid, …).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIX, fixture, viewerSuite } from './suite.mjs';

const demo = fixture('demo.json');
const job = fixture('job.json');

const suite = viewerSuite();
const { open } = suite;

const timeRanges = (page) => page.$$eval('figure.timechart', (figs) =>
  figs.map((f) => [f.dataset.kind, Number(f.dataset.t0), Number(f.dataset.t1)]));

// What a person must see on the demo report, wherever it was opened from.
async function checkDemo(page) {
  const verdict = await page.textContent('.verdict-title');
  assert.equal(verdict, demo.verdict.title);
  assert.equal(await page.locator('article.finding').count(), demo.findings.length);
  assert.ok(demo.findings.length > 0, 'the demo report has findings');
  const titles = await page.$$eval('article.finding h3', (hs) => hs.map((h) => h.textContent));
  demo.findings.forEach((f, i) => assert.ok(titles[i].includes(f.title), `card ${i} is ${f.title}`));
  assert.equal(await page.locator('figure.gpu-timeline').count(), demo.series.length);
  assert.equal(await page.locator('figure.gpu-timeline .svg svg').count(), demo.series.length);
  assert.equal(await page.locator('figure.heatmap svg').count(), demo.series.length > 1 ? 1 : 0);
  assert.equal(await page.locator('#steps-hist svg').count(), 1, 'step histogram');
  assert.equal(await page.locator('table.phases').count(), 1, 'phase table');
  assert.ok(await page.locator('table.devices').count() === 1, 'device table');
  assert.ok(await page.isHidden('#ranks-section'), 'no Ranks section without ranks');
  // The session's comparison with its baseline, under the verdict.
  const baseline = await page.textContent('section.baseline');
  assert.ok(baseline.includes('Against the baseline') && baseline.includes(demo.comparison.baseline), baseline);
  assert.ok(baseline.includes(demo.comparison.result.summary), baseline);
  assert.ok(baseline.includes(`Experiment for ${demo.comparison.result.experiments[0].finding}`), baseline);

  // Brush across the first timeline: every time chart follows, to the same range.
  const before = await timeRanges(page);
  const plot = page.locator('figure.gpu-timeline .plot').first();
  await plot.scrollIntoViewIfNeeded();
  const box = await plot.boundingBox();
  const y = box.y + 40;
  await page.mouse.move(box.x + 64 + (box.width - 80) * 0.3, y);
  await page.mouse.down();
  await page.mouse.move(box.x + 64 + (box.width - 80) * 0.45, y, { steps: 4 });
  await page.mouse.move(box.x + 64 + (box.width - 80) * 0.6, y, { steps: 4 });
  await page.mouse.up();
  const afterZoom = await timeRanges(page);
  assert.equal(afterZoom.length, before.length);
  const [, a0, a1] = afterZoom[0];
  const [, b0, b1] = before[0];
  assert.ok(a0 > b0 && a1 < b1, `zoomed in: ${a0}–${a1} within ${b0}–${b1}`);
  assert.ok(Math.abs((a1 - a0) - 0.3 * (b1 - b0)) < 0.05 * (b1 - b0), 'to the brushed 30%');
  for (const [kind, t0, t1] of afterZoom) {
    assert.equal(t0, a0, `${kind} follows the zoom`);
    assert.equal(t1, a1, `${kind} follows the zoom`);
  }
  // The read-out under the pointer names the GPU and its values.
  await page.mouse.move(box.x + box.width / 2, y);
  assert.ok((await page.textContent('#readout')).includes('Utilization'));
  await page.click('#zoom-reset');
  assert.deepEqual(await timeRanges(page), before);
}

describe('the static page', () => {
  test('shows the demo report opened by ?url=, and brush-zoom moves every timeline', async () => {
    const { page, state, errors } = await open(`${suite.base}/index.html?url=/fixtures/demo.json`);
    assert.equal(state, 'ready', errors.join('\n'));
    await checkDemo(page);
    // Artifacts for a person to look at: the top of the page in both themes, and all of it.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(FIX, 'demo.png') });
    await page.screenshot({ path: join(FIX, 'demo-full.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(100);
    await page.screenshot({ path: join(FIX, 'demo-dark.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('opens the same report gzip-compressed (demo.json.gz), unzipped by the browser', async () => {
    const { page, state, errors } = await open(`${suite.base}/index.html?url=/fixtures/demo.json.gz`);
    assert.equal(state, 'ready', errors.join('\n'));
    await checkDemo(page);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('computes a chart\'s numbers when they are opened, and again after a zoom', async () => {
    const { page, state } = await open(`${suite.base}/index.html?url=/fixtures/demo.json`);
    assert.equal(state, 'ready');
    const numbers = page.locator('figure.gpu-timeline details.numbers').first();
    assert.equal(await numbers.locator('table').count(), 0, 'not computed while closed');
    await numbers.locator('summary').click();
    const rows = numbers.locator('tbody tr');
    // The table is filled on the `toggle` event, which comes a task after the click.
    await rows.nth(1).waitFor({ timeout: 5000 });
    assert.ok(await rows.count() >= 2, 'a row per series');
    assert.match(await numbers.textContent(), /Utilization: GPU busy/);
    const before = await numbers.locator('.range').textContent();
    await page.click('#zoom-in');
    assert.notEqual(await numbers.locator('.range').textContent(), before, 'follows the zoom');
    await page.close();
  });

  test('collapses identical per-GPU lines: evidence rows and capability lists name their GPUs', async () => {
    const { page, state, errors } = await open(`${suite.base}/index.html?url=/fixtures/demo.json`);
    assert.equal(state, 'ready', errors.join('\n'));
    // "0–2, 5, 7" → [0, 1, 2, 5, 7]
    const expand = (s) => s.split(', ').filter((p) => p !== '').flatMap((p) => {
      const [a, b] = p.split('–').map(Number);
      return b === undefined ? [a] : Array.from({ length: b - a + 1 }, (_, i) => a + i);
    });
    // Capabilities: one list per distinct table, headed by its GPUs.
    const groups = new Map();
    for (const d of demo.devices) {
      const key = JSON.stringify(d.capabilities);
      groups.set(key, [...(groups.get(key) ?? []), d.index]);
    }
    assert.ok(groups.size < demo.devices.length, 'the demo GPUs share capability tables');
    const heads = await page.$$eval('#devices details.caps summary', (s) => s.map((x) => x.textContent));
    assert.equal(heads.length, groups.size, heads.join('\n'));
    const named = heads.flatMap((h) => expand(h.match(/^GPUs? ([0-9–, ]+):/)[1]));
    assert.deepEqual(named.sort((a, b) => a - b), demo.devices.map((d) => d.index).sort((a, b) => a - b));
    // Evidence: each card's rows are distinct but for the GPU cell, and name every GPU the
    // finding's evidence has, once per measurement.
    const cards = await page.$$eval('article.finding', (arts) => arts.map((a) =>
      Array.from(a.querySelectorAll('table.evidence tbody tr'), (tr) =>
        Array.from(tr.cells, (c) => c.textContent))));
    assert.equal(cards.length, demo.findings.length);
    let collapsed = false;
    cards.forEach((rows, i) => {
      const ev = demo.findings[i].evidence;
      const gpus = rows.reduce((n, r) => n + expand(r[6]).length, 0);
      assert.equal(gpus, ev.filter((e) => e.device !== null && e.device !== undefined).length, `card ${i}`);
      const keyed = rows.filter((r) => r[6] !== '').map((r) => r.slice(0, 6).join('|'));
      assert.equal(new Set(keyed).size, keyed.length, `card ${i}: identical rows left apart`);
      collapsed ||= rows.length < ev.length;
    });
    assert.ok(collapsed, 'some evidence of the demo collapsed');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('opens a report from the file picker', async () => {
    const { page } = await open(`${suite.base}/index.html`);
    await page.setInputFiles('#file', join(FIX, 'demo.json'));
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    assert.equal(await page.textContent('.verdict-title'), demo.verdict.title);
    await page.close();
  });

  test('refuses a report from another site', async () => {
    const { page, state } = await open(`${suite.base}/index.html?url=http://example.invalid/r.json`);
    assert.equal(state, 'error');
    assert.match(await page.textContent('#message'), /Only reports from this site/);
    await page.close();
  });

  for (const [file, pattern] of [
    ['invalid.json', /not valid JSON[\s\S]*ends in the middle/],
    ['future.json', /newer viewer[\s\S]*gpuwhy\.report\/2\.0 is newer/],
    ['not-report.json', /not a gpuwhy report/],
  ]) {
    test(`says what is wrong with ${file}`, async () => {
      const { page, state } = await open(`${suite.base}/index.html?url=/fixtures/${file}`);
      assert.equal(state, 'error');
      assert.ok(await page.isVisible('#message'));
      assert.match(await page.textContent('#message'), pattern);
      assert.ok(await page.isHidden('#report'));
      await page.close();
    });
  }
});

describe('a merged job report', () => {
  test('shows the Ranks section after the findings: a row per rank, the straggler marked', async () => {
    const { page, state, errors } = await open(`${suite.base}/index.html?url=/fixtures/job.json`);
    assert.equal(state, 'ready', errors.join('\n'));
    assert.ok(await page.isVisible('#ranks-section'));
    const rows = page.locator('table.ranks tbody tr');
    // Seven ranks: a small job lists every one, by rank.
    assert.equal(await rows.count(), job.ranks.ranks.length);
    assert.deepEqual(await rows.locator('th').allTextContents(), job.ranks.ranks.map((r) => String(r.rank)));
    const hosts = await page.$$eval('table.ranks tbody tr', (trs) => trs.map((tr) => tr.cells[1].textContent));
    assert.deepEqual(hosts, job.ranks.ranks.map((r) => r.host));
    const marked = await page.$$eval('table.ranks tr.straggler', (trs) => trs.map((tr) => tr.cells[0].textContent));
    assert.deepEqual(marked, job.ranks.stragglers.map((s) => String(s.rank)));
    assert.deepEqual(marked, ['3']);
    const three = await page.locator('table.ranks tr.straggler').textContent();
    assert.ok(three.includes('data 0.200 s ×4.00') && three.includes('yes (data)'), three);
    assert.match(await page.textContent('#ranks .note'), /^7 ranks on 2 nodes; world size 8; missing: rank 6; 1 straggler\.$/);
    // Right after the findings.
    const order = await page.$$eval('#findings, #ranks-section, section.charts', (els) => els.map((e) => e.id || e.className));
    assert.deepEqual(order, ['findings', 'ranks-section', 'charts']);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('the single-file export', () => {
  test('works from file:// with no network', async () => {
    const url = pathToFileURL(join(FIX, 'demo.html')).href;
    const { page, state, errors } = await open(url);
    assert.equal(state, 'ready', errors.join('\n'));
    await checkDemo(page);
    assert.deepEqual(errors, []);
    await page.close();
  });
});

describe('a hostile report', () => {
  const PAYLOAD_START = '<img src=x onerror="window.__gpuwhyPwned=1">';
  for (const [how, url] of [
    ['on the static page', () => `${suite.base}/index.html?url=/fixtures/hostile.json`],
    ['in the single file', () => pathToFileURL(join(FIX, 'hostile.html')).href],
  ]) {
    test(`runs no script and shows its text literally ${how}`, async () => {
      const { page, state, errors } = await open(url());
      assert.equal(state, 'ready', errors.join('\n'));
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => window.__gpuwhyPwned), undefined);
      assert.equal(await page.locator('img').count(), 0);
      const title = await page.textContent('.verdict-title');
      assert.ok(title.startsWith(PAYLOAD_START), title);
      assert.ok(title.includes('</script><script>'), title);
      assert.ok((await page.textContent('figure.gpu-timeline figcaption')).includes(PAYLOAD_START));
      assert.ok((await page.textContent('#devices')).includes(PAYLOAD_START));
      assert.ok((await page.textContent('#ranks')).includes(PAYLOAD_START), 'rank hosts and phases');
      assert.ok((await page.textContent('section.baseline')).includes(PAYLOAD_START), 'the baseline comparison');
      assert.equal(await page.locator('figure.gpu-timeline').count(), demo.series.length);
      assert.deepEqual(errors, []);
      await page.close();
    });
  }
});
