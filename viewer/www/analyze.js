// Analysis in the browser: the analysis module (viewer/analyze/, core's importers, trace
// reader, signals and rules on wasm32) loaded on demand, the first time a file is not a
// report or "Re-run the rules" is clicked. app.js imports this file only then, so a page
// that shows reports never fetches either.
//
// A single file made by `gpuwhy view --with-analysis` has this file, the module's glue and
// the module itself (gzip, base64) inline, and unzips the module here the first time it is
// needed; one made without it has no module, and app.js shows why a file was refused, as
// before (see docs/viewer.md).
//
// Text from the module (notes, error messages) goes through
// textContent only.

// @inline-strip-begin (the single file has the glue inline, in this file's scope)
import { inlineWasm } from './charts.js';
const glue = () => import('./gpuwhy_analyze.js');
// @inline-strip-end

let loading = null;

// The module's glue and WebAssembly, fetched (or unzipped from the page) and compiled once.
function load() {
  if (!loading) {
    loading = glue().then(async (m) => {
      const bytes = await inlineWasm('gpuwhy-analyze-wasm');
      if (bytes) m.initSync({ module: bytes });
      else await m.default();
      return m;
    });
    loading.catch(() => { loading = null; });
  }
  return loading;
}

const TITLES = {
  dmon: 'This nvidia-smi dmon log cannot be read',
  csv: 'This nvidia-smi CSV log cannot be read',
  trace: 'This profiler trace cannot be read',
  journal: 'This crash journal cannot be read',
  report: 'The rules could not be re-run on this report',
  '': 'This is not a file gpuwhy reads',
};

// What the reader inferred or left out, under the verdict (whose summary already ends with
// where the report came from).
function showNotes(analysis, name) {
  const box = document.getElementById('analysis-notes');
  const notes = analysis.notes;
  if (!box || !notes.length) return;
  const p = document.createElement('p');
  p.textContent = `Read from ${name}:`;
  const ul = document.createElement('ul');
  for (const n of notes) {
    const li = document.createElement('li');
    li.textContent = n;
    ul.append(li);
  }
  box.replaceChildren(p, ul);
  box.dataset.kind = analysis.kind;
  box.hidden = false;
}

// Reads `bytes` with the analysis module and shows the report it makes with the viewer.
// `refused` is the viewer's `{kind, title, message}` when it would not open the file as a
// report (null for "Re-run the rules"): JSON that core too takes for a report keeps the
// viewer's reason, which says best what is wrong with it. `page` is app.js's
// `{ openBytes, showMessage }`.
export async function analyse(bytes, name, refused, page) {
  let mod;
  try {
    mod = await load();
  } catch (e) {
    // A single file without the module says how to get a page that has it.
    const more = e.withoutModule ? ` ${e.message}` : '';
    if (refused) page.showMessage(refused.title, refused.message + more, refused.kind);
    else page.showMessage('The analysis module could not be loaded', `${e.message || e}`);
    return;
  }
  const kind = mod.detect(bytes.subarray(0, 64 * 1024));
  if (refused && (kind === 'report')) {
    page.showMessage(refused.title, refused.message, refused.kind);
    return;
  }
  performance.mark('gpuwhy-analyse');
  let analysis;
  try {
    analysis = mod.analyze(bytes, name);
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) {
      // A panic aborts the module; a fresh page gets a fresh one.
      page.showMessage('The analysis failed', `gpuwhy's analysis stopped on ${name} (${e.message}); reload the page, and please report it with the file if you can share it.`);
    } else {
      page.showMessage(TITLES[kind] || TITLES[''], String(e));
    }
    return;
  }
  performance.mark('gpuwhy-analysed');
  try {
    page.openBytes(analysis.takeReport(), name, true);
    if (document.body.dataset.state === 'ready') showNotes(analysis, name);
  } finally {
    analysis.free();
  }
}
