// Assembles the viewer from the wasm-bindgen output and viewer/www:
//   OUT/www/                 the static page (index.html, app.js, charts.js, compare.js,
//                            style.css, glue, wasm)
//   OUT/gpuwhy-viewer.html   one self-contained page for `gpuwhy view`: CSS and JS inline,
//                            the wasm gzipped as base64, and placeholders for the report
//                            and for the analysis module
//   OUT/gpuwhy_analyze_bg.wasm.gz.b64
//                            the analysis module gzipped as base64, which
//                            `gpuwhy view --with-analysis` puts into its placeholder
// Usage: node bundle.mjs PKG_DIR WWW_DIR OUT_DIR
// PKG_DIR holds wasm-bindgen's output and each module's `.wasm.gz` (xtask gzips them, with
// a pinned compressor, so that the output is the same on every machine).
// The single file carries a Content-Security-Policy that allows only its own script (by
// hash) and WebAssembly: even if report text were ever mis-escaped, no injected script or
// event handler could run.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [pkg, www, out] = process.argv.slice(2);
if (!pkg || !www || !out) {
  console.error('usage: node bundle.mjs PKG_DIR WWW_DIR OUT_DIR');
  process.exit(2);
}
const read = (p) => readFileSync(p, 'utf8');
const html = read(join(www, 'index.html'));
const css = read(join(www, 'style.css'));
const app = read(join(www, 'app.js'));
const charts = read(join(www, 'charts.js'));
const compare = read(join(www, 'compare.js'));
const analyze = read(join(www, 'analyze.js'));
const glue = read(join(pkg, 'gpuwhy_viewer.js'));
const analyzeGlue = read(join(pkg, 'gpuwhy_analyze.js'));
const wasmGz = readFileSync(join(pkg, 'gpuwhy_viewer_bg.wasm.gz'));
const analyzeGz = readFileSync(join(pkg, 'gpuwhy_analyze_bg.wasm.gz'));

// Replaces the line after a `<!-- @name -->` marker (the marker goes too).
function replaceMarked(doc, name, line) {
  const re = new RegExp(`<!-- @${name} -->[^\\n]*`);
  if (!re.test(doc)) throw new Error(`index.html has no <!-- @${name} --> marker`);
  return doc.replace(re, () => line);
}
const unmark = (doc) => doc.replace(/<!-- @[a-z]+ -->/g, '');

// The static page.
const site = join(out, 'www');
mkdirSync(site, { recursive: true });
writeFileSync(join(site, 'index.html'), unmark(html));
writeFileSync(join(site, 'app.js'), app);
writeFileSync(join(site, 'charts.js'), charts);
writeFileSync(join(site, 'compare.js'), compare);
writeFileSync(join(site, 'style.css'), css);
writeFileSync(join(site, 'gpuwhy_viewer.js'), glue);
copyFileSync(join(pkg, 'gpuwhy_viewer_bg.wasm'), join(site, 'gpuwhy_viewer_bg.wasm'));

// The single file: one module script, the glue, then charts.js and compare.js without their
// imports and exports, then app.js without its imports.
const stripImports = (src, name) => {
  const out = src.replace(/\/\/ @inline-strip-begin[\s\S]*?\/\/ @inline-strip-end\n/, '');
  if (out === src) throw new Error(`${name} has no @inline-strip block`);
  return out;
};
const stripped = stripImports(app, 'app.js');
const local = charts.replace(/^export /gm, '');
if (/^\s*(import|export)\b/m.test(local)) throw new Error('charts.js imports or exports more than declarations');
const side = stripImports(compare, 'compare.js').replace(/^export /gm, '');
if (/^\s*(import|export)\b/m.test(side)) throw new Error('compare.js imports or exports more than declarations');
// The analysis: its glue and analyze.js in one function's scope (their names would clash
// with the viewer's glue and app.js), the glue's exports made plain declarations. Without
// the module in the page, loading it fails with what to do instead.
const analyzeLocal = analyzeGlue
  .replace(/^export default [^;\n]+;\n/m, '')
  .replace(/^export \{[^}]*\};?\n/gm, '')
  .replace(/^export /gm, '');
if (/^\s*(import|export)\b/m.test(analyzeLocal)) throw new Error('gpuwhy_analyze.js imports or exports more than declarations');
const analyzeLoader = stripImports(analyze, 'analyze.js').replace(/^export /gm, '');
if (/^\s*(import|export)\b/m.test(analyzeLoader)) throw new Error('analyze.js imports or exports more than declarations');
const analysis = `const ANALYSIS = (() => {
${analyzeLocal}
const glue = async () => {
  if (!$('gpuwhy-analyze-wasm').textContent.trim()) {
    throw Object.assign(new Error('To read logs and traces in this page, write it with \`gpuwhy view --with-analysis\`.'), { withoutModule: true });
  }
  return { initSync, detect, analyze };
};
${analyzeLoader}
return { analyse };
})();
const analysisModule = async () => ANALYSIS;`;
const script = `\n${glue}\n${local}\n${side}\n${analysis}\n${stripped}\n`;
if (/<\/script/i.test(script)) throw new Error('inline script contains </script');
const hash = createHash('sha256').update(script, 'utf8').digest('base64');
const csp = [
  "default-src 'none'",
  `script-src 'sha256-${hash}' 'wasm-unsafe-eval'`,
  "style-src 'unsafe-inline'",
  'img-src data:',
  "connect-src 'none'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
let one = html;
one = replaceMarked(one, 'csp', `<meta http-equiv="Content-Security-Policy" content="${csp}">`);
one = replaceMarked(one, 'style', `<style>\n${css}</style>`);
one = replaceMarked(one, 'report',
  '<script type="application/json" id="gpuwhy-report" data-name="@@GPUWHY_NAME@@">@@GPUWHY_REPORT@@</script>');
one = replaceMarked(one, 'compare',
  '<script type="application/json" id="gpuwhy-compare" data-name="@@GPUWHY_COMPARE_NAME@@">@@GPUWHY_COMPARE@@</script>');
one = replaceMarked(one, 'wasm',
  `<script type="application/octet-stream" id="gpuwhy-wasm">${wasmGz.toString('base64')}</script>`);
one = replaceMarked(one, 'analysis',
  '<script type="application/octet-stream" id="gpuwhy-analyze-wasm">@@GPUWHY_ANALYSIS@@</script>');
one = replaceMarked(one, 'app', `<script type="module">${script}</script>`);
one = one.replace(/^<!doctype html>\n/i, (d) => `${d}<!-- Generated by \`cargo xtask viewer\` from viewer/ (committed as viewer/dist/); do not edit. -->\n`);
writeFileSync(join(out, 'gpuwhy-viewer.html'), one);
const analysisB64 = `${analyzeGz.toString('base64')}\n`;
writeFileSync(join(out, 'gpuwhy_analyze_bg.wasm.gz.b64'), analysisB64);
console.log(`viewer: ${site}/ and ${join(out, 'gpuwhy-viewer.html')} (${one.length} bytes; analysis ${analysisB64.length} bytes)`);
