//! The page: one HTML file with its pictures inline (SVG, PNG as data URIs), its style inline,
//! no script but the report's data as JSON, and a content security policy that lets the page
//! load nothing from anywhere.

use std::fmt::Write as _;

use dspk_types::DspResult;

use crate::build::counts;
use crate::colour;
use crate::draw::{escape, heat, noise, probe, traces};
use crate::model::{ChannelRow, ColourBy, Report};

/// What the page may load: nothing but its own inline style and `data:` images.
const POLICY: &str = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";

const STYLE: &str = "\
body{font-family:sans-serif;margin:16px 24px;color:#1d1d1d;background:#fff}\
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 6px;border-bottom:1px solid #ddd}\
h3{font-size:14px;margin:14px 0 4px}.answer{font-size:16px;margin:6px 0}\
.sub{color:#555;font-size:13px;margin:2px 0}.row{display:flex;gap:12px;align-items:flex-start}\
.panels{display:flex;gap:6px;overflow-x:auto}figure{margin:0}.panel svg{display:block}figcaption{font-size:12px;color:#333}\
.sw{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;vertical-align:-1px}\
table{border-collapse:collapse;font-size:13px}td{padding:2px 10px 2px 0;vertical-align:top}\
pre{background:#f6f6f6;padding:8px;font-size:12px;max-width:900px;overflow-x:auto}";

/// The page of `report`.
///
/// # Errors
/// A chart that does not draw (a bug).
pub fn render(report: &Report) -> DspResult<String> {
    let run = &report.run;
    let mut page = String::with_capacity(1 << 20);
    let title = format!("dspk {} report: {}", report.kind.name(), run.recording);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&title)
    );
    let (dead, noisy, good) = counts(&report.channels);
    let _ = write!(
        page,
        "<header>\n<h1>{}</h1>\n<p class=\"answer\" id=\"answer\">{}</p>\n\
         <p class=\"sub\">{}: {} channels at {}, {:.3} s · {} on {}</p>\n</header>\n",
        escape(&title),
        escape(&report.answer()),
        escape(&run.format),
        run.channel_count,
        escape(&run.sample_rate),
        run.duration_s,
        escape(&run.runtime),
        escape(&run.device)
    );

    // The probe and the noise along it.
    let drawn: Vec<ChannelRow> = report
        .channels
        .iter()
        .filter(|r| r.on_probe)
        .cloned()
        .collect();
    let (_, depth, x_range) = probe::layout(
        &drawn,
        report.probe.contact_um,
        report.probe.stated,
        report.probe.model.clone(),
    );
    let probe_svg = probe::svg(report.colour_by, &drawn, &report.probe, depth, x_range)?;
    let noise_svg = noise::svg(&drawn, depth, report.median_std, report.noisy_threshold)?;
    let geometry = if report.probe.stated {
        format!(
            "{}drawn to scale, {:.3} px per µm",
            report
                .probe
                .model
                .as_deref()
                .map_or(String::new(), |m| format!("{} · ", escape(m))),
            report.probe.px_per_um
        )
    } else {
        "the recording states no geometry: channels drawn in their order, 20 µm apart".to_string()
    };
    let legend = match report.colour_by {
        ColourBy::Class => format!(
            "<span class=\"sw\" style=\"background:{}\"></span>good {good}\
             <span class=\"sw\" style=\"background:{}\"></span>dead {dead}\
             <span class=\"sw\" style=\"background:{}\"></span>noisy {noisy}",
            colour::hex(colour::GOOD),
            colour::hex(colour::DEAD),
            colour::hex(colour::NOISY),
        ),
        by => {
            let (lo, hi) = probe::value_range(by, &drawn);
            format!(
                "contacts coloured by {}: {lo:.2} µV <span class=\"sw\" style=\"width:80px;\
                 background:linear-gradient(to right,{},{},{},{},{})\"></span> {hi:.2} µV \
                 (dead {dead}, noisy {noisy}, good {good})",
                by.name(),
                colour::hex(colour::sequential(0.0)),
                colour::hex(colour::sequential(0.25)),
                colour::hex(colour::sequential(0.5)),
                colour::hex(colour::sequential(0.75)),
                colour::hex(colour::sequential(1.0)),
            )
        }
    };
    let _ = write!(
        page,
        "<section id=\"probe\">\n<h2>The probe</h2>\n<p class=\"sub\">{geometry}. {legend} \
         · hover a contact for its channel. {}.</p>\n<div class=\"row\">\n\
         <figure id=\"probe-drawing\" data-px-per-um=\"{}\" data-origin-x=\"{}\" data-origin-y=\"{}\" \
         data-colour-by=\"{}\">\n{probe_svg}</figure>\n\
         <figure id=\"noise\">\n{noise_svg}</figure>\n</div>\n</section>\n",
        escape(&report.statistics_from),
        report.probe.px_per_um,
        report.probe.origin_px.0,
        report.probe.origin_px.1,
        report.colour_by.name(),
    );

    // The windows.
    let _ = write!(
        page,
        "<section id=\"windows\">\n<h2>Windows</h2>\n<p class=\"sub\">Each heat map shows every \
         channel (down) over the window (across), each pixel the sample of its column farthest \
         from its channel's median, coloured from the window's 0.5th (blue) to its 99.5th \
         (red) percentile. Under it, the traces of a few channels (their envelope at this \
         width){}.</p>\n",
        if report.windows.iter().any(|w| !w.spikes.is_empty()) {
            "; ▲ marks a spike the synthetic recording planted"
        } else {
            ""
        }
    );
    let rate = run.sample_rate_hz;
    for (w, window) in report.windows.iter().enumerate() {
        let t0 = window.start_s;
        let t1 = t0 + (window.end_sample - window.start_sample) as f64 / rate;
        let _ = write!(
            page,
            "<h3>Window {}: {t0:.3} s to {t1:.3} s (samples {}..{})</h3>\n<div class=\"panels\">\n",
            w + 1,
            window.start_sample,
            window.end_sample
        );
        for (p, panel) in window.panels.iter().enumerate() {
            let rows = panel.heat.len() / panel.columns.max(1);
            let heat_svg = heat::svg(
                &panel.heat,
                rows,
                panel.columns,
                t0,
                t1,
                panel.vmin,
                panel.vmax,
                &panel.unit,
            )?;
            let trace_svg = traces::svg(
                &panel.traces,
                &window.trace_channels,
                heat::COLUMNS as u32,
                t0,
                t1,
                window.start_sample,
                rate,
                &window.spikes,
                &panel.unit,
            )?;
            let _ = write!(
                page,
                "<figure class=\"panel\" id=\"w{w}p{p}\" data-window=\"{w}\" data-panel=\"{p}\" \
                 data-vmin=\"{}\" data-vmax=\"{}\" data-min=\"{}\" data-max=\"{}\">\n\
                 <figcaption>{} · {:.1} to {:.1} {}</figcaption>\n{heat_svg}{trace_svg}</figure>\n",
                panel.vmin,
                panel.vmax,
                panel.min,
                panel.max,
                escape(&panel.title),
                panel.vmin,
                panel.vmax,
                escape(&panel.unit)
            );
        }
        page.push_str("</div>\n");
    }
    page.push_str("</section>\n");

    // The run.
    page.push_str("<section id=\"run\">\n<h2>The run</h2>\n<table>\n");
    let mut row = |k: &str, v: &str| {
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(k),
            escape(v)
        );
    };
    row("recording", &run.recording);
    row("format", &run.format);
    row("sample rate", &run.sample_rate);
    row("duration", &format!("{:.3} s", run.duration_s));
    row("channels", &run.channel_count.to_string());
    row("device", &format!("{} ({})", run.device, run.runtime));
    for f in &run.figures {
        row("figures", f);
    }
    for f in &run.fitted {
        row("fitted", f);
    }
    for wline in &run.warnings {
        row("warning", wline);
    }
    if run.warnings.is_empty() {
        row("warnings", "none");
    }
    page.push_str("</table>\n");
    if let Some(toml) = &run.pipeline {
        let _ = write!(page, "<h3>Pipeline</h3>\n<pre>{}</pre>\n", escape(toml));
    }
    for m in &report.whitening {
        let svg = heat::matrix_svg(&m.weights, m.channels, m.limit)?;
        let _ = write!(
            page,
            "<h3>Whitening matrix of stage {} ({} channels; blue −{:.3} to red +{:.3}, largest \
             off the diagonal)</h3>\n<figure class=\"matrix\">\n{svg}</figure>\n",
            m.stage + 1,
            m.channels,
            m.limit,
            m.limit
        );
    }
    page.push_str("</section>\n");
    let data = serde_json::to_string(report)
        .map_err(|e| {
            dspk_types::DspError::config(format!("the report's data does not encode: {e}"))
        })?
        .replace("</", "<\\/");
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"dspk-report\">{data}</script>\n</body>\n</html>\n"
    );
    Ok(page)
}
