//! `ctxwin replay --svg`: input tokens per request under each policy, one line each, and the
//! log's own prompt where it holds the provider's usage.

use std::fmt::Write;

/// Line colours, one per series, in order.
const COLOURS: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"];

/// One line of the chart: its label and the tokens of each request (`None`: not known).
pub struct Series {
    pub label: String,
    pub points: Vec<Option<u64>>,
    pub dashed: bool,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The SVG document: requests on x, tokens on y, with `limit` (the context limit) drawn when
/// it is known.
pub fn svg(title: &str, series: &[Series], limit: Option<u64>) -> String {
    let (width, height, left, right, top, bottom) = (900.0, 480.0, 80.0, 220.0, 40.0, 50.0);
    let (plot_w, plot_h) = (width - left - right, height - top - bottom);
    let requests = series.iter().map(|s| s.points.len()).max().unwrap_or(0).max(2);
    let data_max = series.iter().flat_map(|s| s.points.iter().flatten()).copied().max().unwrap_or(1);
    let y_max = limit.filter(|&l| l < data_max * 2).map_or(data_max, |l| l.max(data_max)).max(1) as f64;
    let x = |i: usize| left + plot_w * i as f64 / (requests - 1) as f64;
    let y = |v: u64| top + plot_h * (1.0 - v as f64 / y_max);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"12\">"
    );
    let _ = writeln!(out, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    let _ = writeln!(out, "<text x=\"{left}\" y=\"22\" font-size=\"14\">{}</text>", escape(title));
    for step in 0..=4 {
        let value = (y_max * f64::from(step) / 4.0).round() as u64;
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{value}</text>",
            left + plot_w,
            left - 6.0,
            y(value) + 4.0,
            y = y(value)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">request (1 to {requests})</text><text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">input tokens</text>",
        left + plot_w / 2.0,
        height - 12.0,
        top + plot_h / 2.0,
        top + plot_h / 2.0
    );
    if let Some(limit) = limit.filter(|&l| (l as f64) <= y_max) {
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" x2=\"{}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\" stroke=\"black\" stroke-dasharray=\"2 3\"/><text x=\"{}\" y=\"{:.1}\">context limit</text>",
            left + plot_w,
            left + 6.0,
            y(limit) - 4.0,
            ly = y(limit)
        );
    }
    for (n, line) in series.iter().enumerate() {
        let colour = COLOURS[n % COLOURS.len()];
        let points: Vec<String> =
            line.points.iter().enumerate().filter_map(|(i, p)| p.map(|v| format!("{:.1},{:.1}", x(i), y(v)))).collect();
        let dash = if line.dashed { " stroke-dasharray=\"6 4\"" } else { "" };
        let _ = writeln!(
            out,
            "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"{dash} points=\"{}\"/>",
            points.join(" ")
        );
        let ly = top + 16.0 * n as f64;
        let _ = writeln!(
            out,
            "<line x1=\"{}\" x2=\"{}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\" stroke=\"{colour}\" stroke-width=\"2\"{dash}/><text x=\"{}\" y=\"{:.1}\">{}</text>",
            left + plot_w + 10.0,
            left + plot_w + 30.0,
            left + plot_w + 36.0,
            ly + 4.0,
            escape(&line.label)
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_one_line_per_series_and_escapes_labels() {
        let series = [
            Series { label: "as logged".into(), points: vec![Some(10), None, Some(30)], dashed: true },
            Series { label: "sliding <4000>".into(), points: vec![Some(10), Some(20), Some(20)], dashed: false },
        ];
        let svg = svg("t & t", &series, Some(25));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("sliding &lt;4000&gt;") && svg.contains("t &amp; t"));
        assert!(svg.contains("context limit"));
        let first = svg.split("<polyline").nth(1).unwrap();
        assert_eq!(
            first.split("points=\"").nth(1).unwrap().split('"').next().unwrap().split(' ').count(),
            2,
            "a gap skips the point"
        );
    }
}
