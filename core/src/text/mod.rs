//! Text in and out, each done one way: reading a JSON number exactly as serde_json reads it
//! ([`number`]: the trace reader's and the viewer's fast paths), and escaping text for HTML
//! ([`html`]: the viewer's pages and the page `gpuwhy view` writes).

pub mod html;
pub mod number;
