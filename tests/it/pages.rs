//! Every page kind (plot, sweep chart, report, compare) as a person sees
//! it: rendered by headless Chromium (Debian's `chromium`, which
//! `scripts/test` installs) at 1,400×1,000. For each page:
//! - no console messages while it loads;
//! - every legend text of a chart in view lies inside the viewport;
//! - every plot area in view has coloured pixels (the series drew).
//!
//! The layout is measured by a copy of the page with a probe script added
//! (the pages themselves have none) and dumped with `--dump-dom`; the
//! pixels come from a screenshot of the page itself. The screenshots stay
//! in the target directory (`pages/`) for a person to look at; they are
//! artefacts, not goldens.

use crate::common;

use std::{
    path::{Path, PathBuf},
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use barrage_testkit::{CapacityServer, Server};
use common::{ok, path};
use serde_json::Value;

const WIDTH: u32 = 1400;
const HEIGHT: u32 = 1000;

/// Measures every visible chart: its box, its plot area's box and its
/// legend texts' boxes, in page pixels.
const PROBE: &str = r#"<script>
const out = { width: innerWidth, height: innerHeight, charts: [] };
for (const svg of document.querySelectorAll('svg')) {
  const r = svg.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) continue;
  const k = r.width / svg.viewBox.baseVal.width;
  const c = svg.querySelector('clipPath rect');
  const plot = c ? [r.left + c.x.baseVal.value * k, r.top + c.y.baseVal.value * k,
                    c.width.baseVal.value * k, c.height.baseVal.value * k] : null;
  const legends = [...svg.querySelectorAll('text.legend')].map(t => {
    const b = t.getBoundingClientRect();
    return [t.textContent, b.left, b.top, b.right, b.bottom];
  });
  out.charts.push({ box: [r.left, r.top, r.right, r.bottom], plot, legends });
}
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#;

/// Where the screenshots are kept.
fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pages");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs headless Chromium with `args` on `page`; its stdout and stderr.
fn chromium(args: &[&str], page: &Path) -> (String, String) {
    let mut cmd = Command::new("chromium");
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--enable-logging=stderr",
        "--v=0",
        &format!("--window-size={WIDTH},{HEIGHT}"),
    ])
    .args(args)
    .arg(format!("file://{}", page.display()))
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap_or_else(|e| {
        panic!("chromium: {e} (install it: apt-get install chromium; scripts/test does)")
    });
    let id = child.id();
    // Bounded: a hung browser is killed after a minute.
    let watchdog = std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(100));
            if !Path::new(&format!("/proc/{id}")).exists() {
                return;
            }
        }
        unsafe { libc::kill(id as i32, libc::SIGKILL) };
    });
    let out = child.wait_with_output().expect("chromium ran");
    let _ = watchdog.join();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The PNG's pixels (RGB or RGBA rows) and its width and height.
fn pixels(file: &Path) -> (Vec<u8>, u32, u32, usize) {
    let decoder = png::Decoder::new(std::fs::File::open(file).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    (buf, info.width, info.height, channels)
}

/// Pixels inside `(x, y, w, h)` whose colour is a hue, not white or grey.
fn coloured(img: &(Vec<u8>, u32, u32, usize), (x, y, w, h): (f64, f64, f64, f64)) -> usize {
    let (buf, width, height, ch) = img;
    let mut n = 0;
    for py in (y.max(0.0) as u32)..((y + h).min(f64::from(*height)) as u32) {
        for px in (x.max(0.0) as u32)..((x + w).min(f64::from(*width)) as u32) {
            let i = (py as usize * *width as usize + px as usize) * ch;
            let (r, g, b) = (buf[i], buf[i + 1], buf[i + 2]);
            if r.max(g).max(b) - r.min(g).min(b) > 60 {
                n += 1;
            }
        }
    }
    n
}

/// Renders the page `name` and checks it as a person would see it.
fn check(name: &str, html: &[u8]) {
    let dir = shots();
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html).unwrap();
    let text = String::from_utf8_lossy(html);
    assert!(!text.contains("<script"), "{name}: the page has no script");
    // Issue 60: every page says what run it shows, at its top.
    let run = text
        .find("<table class=\"run\">")
        .unwrap_or_else(|| panic!("{name}: no run table"));
    assert!(
        run < text.find("<svg").unwrap_or(usize::MAX),
        "{name}: the run table comes first"
    );
    for what in ["started", "load", "barrage", "input"] {
        assert!(
            text.contains(&format!("<th>{what}</th>")),
            "{name}: no {what} in the run table"
        );
    }
    let probed = dir.join(format!("{name}-probe.html"));
    std::fs::write(
        &probed,
        text.replace("</body>", &format!("{PROBE}\n</body>")),
    )
    .unwrap();
    let png = dir.join(format!("{name}.png"));
    let (_, log) = chromium(&[&format!("--screenshot={}", png.display())], &page);
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "{name}: console messages: {console:?}");
    let (dom, log) = chromium(&["--dump-dom"], &probed);
    let start = dom
        .find("<pre id=\"probe\">")
        .unwrap_or_else(|| panic!("{name}: no probe in the DOM; chromium said {log}"));
    let json = &dom[start + 16..];
    let json = json[..json.find("</pre>").unwrap()]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let probe: Value = serde_json::from_str(&json).unwrap();
    // The layout depends on the width alone; the view is the screenshot's.
    assert_eq!(probe["width"].as_f64(), Some(f64::from(WIDTH)), "{name}");
    let img = pixels(&png);
    assert_eq!(
        (img.1, img.2),
        (WIDTH, HEIGHT),
        "{name}: the screenshot's size"
    );
    let (w, h) = (f64::from(WIDTH), f64::from(HEIGHT));
    let mut in_view = 0;
    for chart in probe["charts"].as_array().unwrap() {
        let top = chart["box"][1].as_f64().unwrap();
        if top >= h {
            continue;
        }
        in_view += 1;
        for l in chart["legends"].as_array().unwrap() {
            let b: Vec<f64> = (1..5).map(|i| l[i].as_f64().unwrap()).collect();
            assert!(
                b[0] >= 0.0 && b[2] <= w && b[1] >= 0.0 && b[3] <= h,
                "{name}: legend {} at {b:?} outside {w}x{h}",
                l[0]
            );
        }
        let p: Vec<f64> = (0..4).map(|i| chart["plot"][i].as_f64().unwrap()).collect();
        if p[1] + p[3] <= h {
            let n = coloured(&img, (p[0], p[1], p[2], p[3]));
            assert!(
                n > 50,
                "{name}: the plot at {p:?} is blank ({n} coloured pixels)"
            );
        }
    }
    assert!(in_view > 0, "{name}: no chart in view");
    eprintln!("{name}: {in_view} charts in view; {}", png.display());
}

#[test]
fn every_page_kind_reads_in_a_browser() {
    let (alpha, lag) = (path("fixtures/alpha.bin"), path("fixtures/lag.bin"));
    check("plot", &ok(&["plot", &alpha], b""));
    check("report", &ok(&["report", "-type", "html", &lag], b""));
    check(
        "report-by",
        &ok(&["report", "-type", "html", "-by", "code", &alpha], b""),
    );
    let page = ok(&["compare", "-type", "html", &alpha, &lag], b"");
    let said = String::from_utf8_lossy(&page);
    assert!(said.contains("<b>base</b>") && said.contains("<th>requests</th>"));
    assert!(
        said.contains("alpha.bin") && said.contains("lag.bin"),
        "both files named"
    );
    check("compare", &page);
    // A sweep: its chart, the plot of its stream (a colour per step) and
    // its report (with the sweep's section).
    // Past its capacity at the last step: a knee, errors, falling success.
    let server = CapacityServer::start(250.0);
    let dir = common::tempdir("pages-sweep");
    let stream = dir.join("sweep.bin");
    let chart = dir.join("sweep.html");
    ok(
        &[
            "sweep",
            "-rates",
            "100,200,400",
            "-step-duration",
            "300ms",
            "-lag-limit",
            "1s",
            "-output",
            stream.to_str().unwrap(),
            "-chart",
            chart.to_str().unwrap(),
        ],
        format!("GET {}\n", server.url("/")).as_bytes(),
    );
    let page = std::fs::read(&chart).unwrap();
    let said = String::from_utf8_lossy(&page);
    assert!(
        said.contains("barrage sweep -rates 100,200,400"),
        "the sweep's command"
    );
    assert!(said.contains(&server.url("/")), "the sweep's target");
    check("sweep", &page);
    check("sweep-plot", &ok(&["plot", stream.to_str().unwrap()], b""));
    check(
        "sweep-report",
        &ok(&["report", "-type", "html", stream.to_str().unwrap()], b""),
    );
    // A flow's sessions: the report's sessions section and its steps,
    // and the plot's series a step.
    let server = Server::http();
    let flow = dir.join("app.flow");
    std::fs::write(
        &flow,
        format!(
            "POST {}\n:name login\n:extract token json:.access_token\n:think 5ms\n\n\
             GET {}\nAuthorization: Bearer {{{{token}}}}\n:name me\n",
            server.url("/login"),
            server.url("/me")
        ),
    )
    .unwrap();
    let stream = ok(
        &[
            "attack",
            "-format",
            "flow",
            "-targets",
            flow.to_str().unwrap(),
            "-rate",
            "200",
            "-requests",
            "100",
            "-cookies=false",
        ],
        b"",
    );
    let html = ok(&["report", "-type", "html", "-by", "step"], &stream);
    assert!(
        String::from_utf8_lossy(&html).contains("<h2>Sessions</h2>"),
        "no sessions section"
    );
    let said = String::from_utf8_lossy(&html);
    assert!(
        said.contains("<th>command</th>") && said.contains("-format flow"),
        "the attack's command"
    );
    check("flow-report", &html);
    check("flow-plot", &ok(&["plot"], &stream));
    // An LLM run (-llm openai): its section, next to the latency.
    let server = CapacityServer::unlimited();
    let body = dir.join("chat.json");
    std::fs::write(
        &body,
        r#"{"model":"m","stream":true,"max_tokens":32,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .unwrap();
    let stream = ok(
        &[
            "attack",
            "-llm",
            "openai",
            "-rate",
            "20",
            "-duration",
            "2s",
            "-scrape",
            &server.url("/metrics"),
            "-scrape-every",
            "250ms",
        ],
        format!(
            "POST {}\nContent-Type: application/json\n@{}\n",
            server.url("/v1/chat/completions?first=50ms&gap=5ms&per=2"),
            body.display()
        )
        .as_bytes(),
    );
    let html = ok(&["report", "-type", "html"], &stream);
    let said = String::from_utf8_lossy(&html);
    for part in [
        "<h2>LLM</h2>",
        "TTFT, from the schedule",
        "ITL, per token",
        "server usage",
        "<h2>Server (scraped)</h2>",
        "barrage_serve_requests_total a second",
        "id=\"server-1\"",
    ] {
        assert!(said.contains(part), "no {part:?} in the LLM page");
    }
    check("llm-report", &html);
}
