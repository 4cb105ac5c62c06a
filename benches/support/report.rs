//! The markdown report: a header and a list of sections, each produced by one measurement.
//! A new measurement appends its own section; nothing else changes.
//!
//! A section with a key is also a generated block of `docs/performance.md`
//! (`hack/doc-block.sh`): a run rewrites the blocks of the sections it ran, and nothing else of
//! the page.

use std::fmt::Write;
use std::path::Path;

/// The generated blocks of `docs/performance.md`, each with what writes it.
pub const DOC_BLOCKS: &[(&str, &str)] = &[
    ("bench-run", "make bench, a full run of every section"),
    ("latency", "make bench"),
    ("baseline", "make bench"),
    ("memory", "make bench"),
    ("quality", "make bench"),
    ("carbon", "make bench"),
    ("e2e", "make bench"),
    ("record", "make bench"),
    ("instructions", "make bench-instructions"),
    ("plan", "cargo bench --bench plan"),
    ("scale", "make bench"),
    ("inputs", "make bench"),
    ("upstream", "make reference-bench"),
];

pub struct Section {
    /// The block of `docs/performance.md` it fills, if any.
    pub key: Option<&'static str>,
    pub title: String,
    pub body: String,
}

#[derive(Default)]
pub struct Report {
    pub header: String,
    pub sections: Vec<Section>,
}

impl Report {
    pub fn push(&mut self, title: impl Into<String>, body: impl Into<String>) {
        self.sections.push(Section {
            key: None,
            title: title.into(),
            body: body.into(),
        });
    }

    /// A section that is also the generated block `key` of `docs/performance.md`.
    pub fn push_block(
        &mut self,
        key: &'static str,
        title: impl Into<String>,
        body: impl Into<String>,
    ) {
        assert!(
            DOC_BLOCKS.iter().any(|(k, _)| *k == key),
            "{key} is not a block of docs/performance.md (DOC_BLOCKS)"
        );
        self.push(title, body);
        if let Some(s) = self.sections.last_mut() {
            s.key = Some(key);
        }
    }

    /// Rewrites the blocks of `page` that this run's sections fill, each opened by `provenance`
    /// when the run is not the one the page's `bench-run` block describes, and that block too
    /// when `header` is given (the header without its title).
    pub fn write_blocks(
        &self,
        page: &Path,
        header: Option<&str>,
        provenance: Option<&str>,
    ) -> Result<(), String> {
        if let Some(header) = header {
            write_block(page, "bench-run", header)?;
        }
        for s in &self.sections {
            if let Some(key) = s.key {
                let body = match provenance {
                    Some(p) => format!("{p}\n\n{}", s.body.trim()),
                    None => s.body.trim().to_string(),
                };
                write_block(page, key, &body)?;
            }
        }
        Ok(())
    }

    pub fn render(&self) -> String {
        let mut out = self.header.clone();
        for (i, s) in self.sections.iter().enumerate() {
            let _ = write!(out, "\n## {}. {}\n\n{}", i + 1, s.title, s.body.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Replaces the generated block `key` of the Markdown `page` with `body`
/// (`hack/doc-block.sh`, which fails unless the page has the block once).
pub fn write_block(page: &Path, key: &str, body: &str) -> Result<(), String> {
    use std::io::Write as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("hack/doc-block.sh");
    let mut child = std::process::Command::new(&script)
        .arg(page)
        .arg(key)
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin
        .write_all(format!("\n{}\n\n", body.trim()).as_bytes())
        .map_err(|e| e.to_string())?;
    drop(stdin);
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// A markdown table; the first row is the header.
pub fn table(rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let _ = writeln!(out, "| {} |", row.join(" | "));
        if i == 0 {
            let _ = writeln!(out, "|{}", row.iter().map(|_| " --- |").collect::<String>());
        }
    }
    out
}

/// One labelled point of the quality chart.
pub struct Point {
    /// legend text
    pub label: String,
    /// utilisation spread (stddev, percentage points)
    pub x: f64,
    /// mean latency, ms
    pub y: f64,
}

fn nice_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|m| *m >= v)
        .unwrap_or(10.0 * mag)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A small scatter chart as standalone SVG text.
pub fn svg_chart(title: &str, x_label: &str, y_label: &str, points: &[Point]) -> String {
    const W: f64 = 960.0;
    const H: f64 = 400.0;
    const L: f64 = 70.0;
    const R: f64 = 450.0;
    const T: f64 = 40.0;
    const B: f64 = 60.0;
    let colours = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#333333",
    ];
    let x_max = nice_max(points.iter().map(|p| p.x).fold(0.0, f64::max) * 1.1);
    let y_max = nice_max(points.iter().map(|p| p.y).fold(0.0, f64::max) * 1.1);
    let px = |x: f64| L + (W - L - R) * x / x_max;
    let py = |y: f64| H - B - (H - T - B) * y / y_max;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        (W - R + L) / 2.0,
        escape(title)
    );
    for i in 0..=5 {
        let (xv, yv) = (x_max * i as f64 / 5.0, y_max * i as f64 / 5.0);
        let (x, y) = (px(xv), py(yv));
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{T}" x2="{x:.1}" y2="{:.1}" stroke="#eee"/>"##,
            H - B
        );
        let _ = writeln!(
            s,
            r##"<line x1="{L}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#eee"/>"##,
            W - R
        );
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{xv:.3}</text>"#,
            H - B + 16.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{yv:.0}</text>"#,
            L - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{L}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#000"/>"##,
        H - B,
        W - R,
        H - B
    );
    let _ = writeln!(
        s,
        r##"<line x1="{L}" y1="{T}" x2="{L}" y2="{:.1}" stroke="#000"/>"##,
        H - B
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (W - R + L) / 2.0,
        H - 18.0,
        escape(x_label)
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">{}</text>"#,
        (H - B + T) / 2.0,
        (H - B + T) / 2.0,
        escape(y_label)
    );
    for (i, p) in points.iter().enumerate() {
        let c = colours[i % colours.len()];
        let (x, y) = (px(p.x), py(p.y));
        let _ = writeln!(s, r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" fill="{c}"/>"#);
        let ly = T + 10.0 + 20.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="5" fill="{c}"/>"#,
            W - R + 20.0,
            ly - 4.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{ly:.1}">{}</text>"#,
            W - R + 30.0,
            escape(&p.label)
        );
    }
    s.push_str("</svg>\n");
    s
}
