// The gpuwhy report viewer page: loads a report (file picker, drag and drop, ?url=, or
// the one embedded by `gpuwhy view`) into the WebAssembly module, says clearly why a file
// cannot be shown, and wires the page; charts.js draws the report and handles interaction.
//
// Report text never reaches innerHTML from here: strings from a report go through
// textContent; HTML comes only from the Rust side, which escapes everything it takes from
// the report.

// @inline-strip-begin (the single-file export inlines the glue above this script instead)
import __wbg_init, { initSync, Viewer } from './gpuwhy_viewer.js';
import { $, buildReport, chartWidth, darkQuery, fetchSameSite, inlineWasm, pan, readFile, renderCharts, setRange, state, zoom } from './charts.js';
import { openCompareFile, openCompareUrl, openEmbeddedCompare, renderCompare, wireCompare } from './compare.js';
// The single file has analyze.js inline (ANALYSIS) instead.
const analysisModule = () => import('./analyze.js');
// @inline-strip-end

async function initWasm() {
  const bytes = await inlineWasm('gpuwhy-wasm');
  if (bytes) {
    initSync({ module: bytes });
  } else {
    await __wbg_init();
  }
}

function showMessage(title, message, kind) {
  const box = $('message');
  box.replaceChildren();
  const h = document.createElement('h2');
  h.textContent = title;
  const p = document.createElement('p');
  p.textContent = message;
  box.append(h, p);
  box.dataset.kind = kind || 'error';
  box.hidden = false;
  document.body.dataset.state = 'error';
}

function clearMessage() {
  $('message').hidden = true;
  $('message').replaceChildren();
}

function openBytes(bytes, name, analysed) {
  clearMessage();
  document.body.dataset.state = 'loading';
  performance.clearMarks();
  performance.mark('gpuwhy-open');
  let v;
  try {
    v = Viewer.open(bytes, name);
  } catch (e) {
    // The module throws `{kind, title, message}` as JSON text.
    let err;
    try {
      err = JSON.parse(e);
    } catch (_) {
      err = { title: 'This file cannot be opened', message: String(e) };
    }
    if (!analysed && ANALYSABLE.includes(err.kind)) return analyse(bytes, name, err);
    showMessage(err.title || 'This file cannot be opened', err.message || String(e), err.kind);
    return;
  }
  performance.mark('gpuwhy-parsed');
  if (!analysed) shown = { bytes, name };
  $('analysis-notes').hidden = true;
  if (state.viewer) state.viewer.free();
  state.viewer = v;
  state.info = JSON.parse(v.info());
  $('welcome').hidden = true;
  $('report').hidden = false;
  try {
    buildReport();
  } catch (e) {
    showMessage('The report could not be drawn', String(e));
    return;
  }
  performance.mark('gpuwhy-rendered');
  // After the next frame: layout and paint of what was just inserted.
  requestAnimationFrame(() => setTimeout(() => performance.mark('gpuwhy-painted'), 0));
  document.body.dataset.state = 'ready';
  state.name = name;
  renderCompare(); // compare.js: the comparison, when a second report is open
}

// Analysis in the browser (analyze.js and its module, loaded the first time they are
// needed): a file the viewer refuses as a report (a dmon or CSV log, a profiler trace, a
// crash journal, or anything else) goes to core's own readers and rules, and "Re-run the
// rules" runs them again on the file shown. The static page fetches the module; a single
// file has it inline only when written with `gpuwhy view --with-analysis`, and without it
// the button is hidden and a refused file keeps the viewer's reason.
const ANALYSABLE = ['invalid', 'not_report', 'journal'];
let shown = null;
const filled = (id) => Boolean($(id) && $(id).textContent.trim());
function analyse(bytes, name, refused) {
  document.body.dataset.state = 'loading';
  shown = { bytes, name };
  analysisModule()
    .then((m) => m.analyse(bytes, name, refused, { openBytes, showMessage }))
    .catch((e) => (refused ? showMessage(refused.title, refused.message, refused.kind)
      : showMessage('The rules could not be re-run', `${e.message || e}`)));
}
$('rerun').hidden = filled('gpuwhy-wasm') && !filled('gpuwhy-analyze-wasm');
$('rerun').addEventListener('click', () => shown && analyse(shown.bytes, shown.name, null));

function openFile(file) {
  return readFile(file, openBytes, (e) => showMessage('The file could not be read', e));
}

function openUrl(param) {
  return fetchSameSite(param,
    { param: '?url=', verb: 'opened', instead: 'open it with "Open a report…"', what: 'The report' },
    openBytes, showMessage);
}

function wirePage() {
  $('file').addEventListener('change', (e) => {
    const f = e.target.files && e.target.files[0];
    if (f) openFile(f);
  });
  document.addEventListener('dragover', (e) => {
    e.preventDefault();
    document.body.classList.add('dragging');
  });
  document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    document.body.classList.remove('dragging');
    const files = (e.dataTransfer && e.dataTransfer.files) || [];
    // Two files: the first is the baseline, the second the candidate (compare.js).
    if (files[0]) openFile(files[0]).then(() => files[1] && openCompareFile(files[1]));
  });
  $('zoom-in').addEventListener('click', () => zoom(0.5));
  $('zoom-out').addEventListener('click', () => zoom(2));
  $('pan-left').addEventListener('click', () => pan(-0.5));
  $('pan-right').addEventListener('click', () => pan(0.5));
  $('zoom-reset').addEventListener('click', () => setRange(state.info.t0, state.info.t1));
  darkQuery.addEventListener('change', () => renderCharts());
  wireCompare();
  let timer = null;
  window.addEventListener('resize', () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (state.viewer && chartWidth() !== state.width) renderCharts();
    }, 150);
  });
}

async function main() {
  wirePage();
  try {
    await initWasm();
  } catch (e) {
    showMessage('The viewer could not start', `Its WebAssembly module did not load: ${e.message || e}`);
    return;
  }
  const embedded = $('gpuwhy-report');
  const text = embedded ? embedded.textContent.trim() : '';
  if (text) {
    openBytes(new TextEncoder().encode(text), embedded.dataset.name || 'report.json');
    openEmbeddedCompare();
    return;
  }
  const params = new URLSearchParams(window.location.search);
  const param = params.get('url');
  if (param) {
    await openUrl(param);
    if (params.get('compare')) await openCompareUrl(params.get('compare'));
    return;
  }
  document.body.dataset.state = 'empty';
}

main();
