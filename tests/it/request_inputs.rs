//! Requests from where users have them: curl commands (copied from Chrome
//! and Firefox, forms, binary bodies) and HAR files arrive at a recording
//! server exactly as written; `barrage targets` converts between formats;
//! bad input is refused at file:line.

use crate::common;

use std::{fs, path::Path};

use barrage_testkit::{Received, Server};
use common::*;

/// The fixture `name` with its placeholder hosts pointed at `server`
/// and `FIXTURES` at the fixtures' directory, written into `dir`.
fn fixture_for(server: &Server, dir: &Path, name: &str) -> String {
    let fixtures = fixture("fixtures/inputs");
    let text = fs::read_to_string(fixtures.join(name)).unwrap();
    let base = server.url("");
    let base = base.trim_end_matches('/');
    let text = text
        .replace("https://shop.example", base)
        .replace("https://cdn.example", base)
        .replace("FIXTURES", fixtures.to_str().unwrap());
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Attacks with `file` in `format` (one request per target, in order)
/// and returns what the server received.
fn send(server: &Server, file: &str, format: &str, n: usize, extra: &[&str]) -> Vec<Received> {
    let requests = n.to_string();
    let mut args = vec!["attack", "-format", format, "-targets", file];
    args.extend(["-rate", "100", "-requests", &requests]);
    args.extend(extra);
    let out = ok(&args, b"");
    let hits = decode(&out);
    assert_eq!(hits.len(), n);
    // (The recording server answers 404 to paths it does not serve.)
    assert!(hits.iter().all(|h| h.code != 0), "{hits:?}");
    let got = server.received();
    assert_eq!(got.len(), n);
    got
}

fn has(r: &Received, name: &str, value: &str) {
    assert_eq!(r.header(name), Some(value), "{name} in {:?}", r.headers);
}

#[test]
fn curl_copied_from_chrome_arrives_as_written() {
    let server = Server::http();
    let dir = tempdir("chrome");
    let file = fixture_for(&server, &dir, "chrome.curl");
    let got = send(&server, &file, "curl", 2, &[]);
    let r = &got[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/api/cart/items?page=2&sort=price");
    assert_eq!(r.body, br#"{"sku":"tea-01","note":"it's a gift","qty":2}"#);
    has(r, "content-type", "application/json");
    has(r, "cookie", "session=a1b2c3; theme=dark");
    has(
        r,
        "sec-ch-ua",
        r#""Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24""#,
    );
    has(r, "sec-ch-ua-platform", r#""Linux""#);
    has(r, "priority", "u=1, i");
    has(
        r,
        "user-agent",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    );
    let r = &got[1];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("GET", "/api/search?q=green%20tea")
    );
    assert!(r.body.is_empty());
    has(r, "accept", "*/*");
}

#[test]
fn curl_copied_from_firefox_arrives_as_written() {
    let server = Server::http();
    let dir = tempdir("firefox");
    let file = fixture_for(&server, &dir, "firefox.curl");
    let got = send(&server, &file, "curl", 2, &[]);
    let r = &got[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/api/cart/items")
    );
    assert_eq!(r.body, b"sku=tea-01&qty=2");
    has(
        r,
        "content-type",
        "application/x-www-form-urlencoded; charset=UTF-8",
    );
    // --compressed keeps the Accept-Encoding the command gives.
    has(r, "accept-encoding", "gzip, deflate, br, zstd");
    has(r, "cookie", "session=a1b2c3");
    has(
        r,
        "referer",
        "https://shop.example/cart"
            .replace("https://shop.example", server.url("").trim_end_matches('/'))
            .as_str(),
    );
    assert_eq!(
        (got[1].method.as_str(), got[1].path.as_str()),
        ("DELETE", "/api/cart/items/7")
    );
}

#[test]
fn curl_forms_and_binary_bodies_arrive_byte_for_byte() {
    let server = Server::http();
    let dir = tempdir("forms");
    let file = fixture_for(&server, &dir, "forms.curl");
    let got = send(&server, &file, "curl", 2, &[]);
    let png = fs::read(fixture("fixtures/inputs/pixel.png")).unwrap();
    let csv = fs::read(fixture("fixtures/inputs/upload.csv")).unwrap();
    let r = &got[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/upload"));
    let ct = r.header("content-type").unwrap();
    let b = ct.strip_prefix("multipart/form-data; boundary=").expect(ct);
    let mut want = Vec::new();
    want.extend(
        format!("--{b}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nPrice list\r\n")
            .bytes(),
    );
    want.extend(format!("--{b}\r\nContent-Disposition: form-data; name=\"sheet\"; filename=\"upload.csv\"\r\nContent-Type: application/octet-stream\r\n\r\n").bytes());
    want.extend(&csv);
    want.extend(format!("\r\n--{b}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"p.png\"\r\nContent-Type: image/png\r\n\r\n").bytes());
    want.extend(&png);
    want.extend(format!("\r\n--{b}--\r\n").bytes());
    assert_eq!(r.body, want);
    let r = &got[1];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/raw"));
    assert_eq!(r.body, png);
    has(r, "authorization", "Basic YWRtaW46czNjcjN0");
    has(r, "content-type", "application/octet-stream");
}

#[test]
fn har_entries_arrive_in_order_and_the_filter_keeps_some() {
    let server = Server::http();
    let dir = tempdir("har");
    let file = fixture_for(&server, &dir, "shop.har");
    let got = send(&server, &file, "har", 4, &[]);
    let paths: Vec<(&str, &str)> = got
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            ("GET", "/api/items?page=1"),
            ("POST", "/api/orders"),
            ("GET", "/logo.png"),
            ("PUT", "/api/blob")
        ]
    );
    has(&got[0], "x-request-id", "abc-1");
    has(&got[0], "accept", "application/json");
    assert!(got[0].headers.iter().all(|(k, _)| !k.starts_with(':')));
    assert_eq!(got[1].body, br#"{"sku":"tea-01","qty":2}"#);
    has(&got[1], "content-length", "24");
    assert_eq!(got[3].body, b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe");
    let server = Server::http();
    let file = fixture_for(&server, &dir, "shop.har");
    let got = send(
        &server,
        &file,
        "har",
        2,
        &["-har-filter", "/api/(orders|blob)"],
    );
    let paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/api/orders", "/api/blob"]);
}

#[test]
fn targets_converts_and_what_it_writes_sends_the_same() {
    let server = Server::http();
    let dir = tempdir("convert");
    let curl = fixture_for(&server, &dir, "forms.curl");
    // curl → JSON → attack: the same bytes as from the curl file.
    let json = ok(&["targets", "-format", "curl", &curl], b"");
    let json_file = dir.join("t.json");
    fs::write(&json_file, &json).unwrap();
    let from_json = send(&server, json_file.to_str().unwrap(), "json", 2, &[]);
    let server2 = Server::http();
    let curl2 = fixture_for(&server2, &dir, "forms.curl");
    let from_curl = send(&server2, &curl2, "curl", 2, &[]);
    for (a, b) in from_json.iter().zip(&from_curl) {
        assert_eq!((&a.method, &a.path, &a.body), (&b.method, &b.path, &b.body));
        assert_eq!(a.header("content-type"), b.header("content-type"));
    }
    // JSON → http (bodies into files) → JSON: what went in comes out.
    let bodies = dir.join("bodies");
    let http = ok(
        &[
            "targets",
            "-format",
            "json",
            "-to",
            "http",
            "-bodies",
            bodies.to_str().unwrap(),
            json_file.to_str().unwrap(),
        ],
        b"",
    );
    let text = String::from_utf8(http.clone()).unwrap();
    assert!(
        text.contains(&format!("@{}", bodies.join("body-1.bin").display())),
        "{text}"
    );
    let again = ok(&["targets", "-format", "http"], &http);
    // (vegeta's JSON reader sorts header names: compare after one pass.)
    let sorted = ok(&["targets", "-format", "json"], &json);
    assert_eq!(
        String::from_utf8(again).unwrap(),
        String::from_utf8(sorted).unwrap()
    );
    // A body with nowhere to go is refused.
    let e = refused(
        &[
            "targets",
            "-format",
            "json",
            "-to",
            "http",
            json_file.to_str().unwrap(),
        ],
        b"",
        "has a body: give -bodies DIR",
    );
    assert!(e.contains("target 1 (POST "), "{e}");
}

#[test]
fn bad_curl_and_har_input_is_refused_at_file_and_line() {
    let dir = tempdir("bad-inputs");
    let curl = dir.join("cmds.curl");
    fs::write(
        &curl,
        "curl http://127.0.0.1:1/ok\n\ncurl http://127.0.0.1:1/ \\\n  --frobnicate\n",
    )
    .unwrap();
    let curl = curl.to_str().unwrap();
    refused(
        &[
            "attack",
            "-format",
            "curl",
            "-targets",
            curl,
            "-rate",
            "1",
            "-duration",
            "1s",
        ],
        b"",
        &format!("{curl}:4: unknown curl option --frobnicate"),
    );
    refused(
        &["targets", "-format", "curl", curl],
        b"",
        &format!("{curl}:4: unknown curl option --frobnicate"),
    );
    let har = dir.join("a.har");
    fs::write(&har, "{\"log\": {\"entries\": [\n  {\"request\": {\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/\"}},\n  {\"request\": {\"method\": \"GET\", \"url\": \"/relative\"}}\n]}}\n").unwrap();
    let har = har.to_str().unwrap();
    refused(
        &[
            "attack",
            "-format",
            "har",
            "-targets",
            har,
            "-rate",
            "1",
            "-duration",
            "1s",
        ],
        b"",
        &format!("{har}:3: entry 1: bad URL: /relative"),
    );
    refused(
        &["attack", "-format", "har", "-har-filter", "(", "-rate", "1"],
        b"",
        "-har-filter",
    );
    refused(&["targets", "-to", "curl"], b"", "-to: json or http");
}

/// Attacks `{server}/echo` with `body` POSTed, `n` requests, and `extra`
/// flags; the records.
fn checked(server: &Server, body: &str, n: usize, extra: &[&str]) -> Vec<barrage_stream::Hit> {
    let dir = tempdir("check-body");
    let file = dir.join("body.json");
    fs::write(&file, body).unwrap();
    let target = format!("POST {}\n", server.url("/echo"));
    let requests = n.to_string();
    let mut args = vec![
        "attack",
        "-body",
        file.to_str().unwrap(),
        "-requests",
        &requests,
    ];
    args.extend(extra);
    let hits = decode(&ok(&args, target.as_bytes()));
    assert_eq!(hits.len(), n);
    hits
}

#[test]
fn checks_that_pass_leave_records_as_they_were() {
    let server = Server::http();
    let checks = [
        "-check",
        "status=2xx",
        "-check",
        "body~\"code\": *0",
        "-check",
        "header:x-seen-method~^POST$",
        "-check",
        "json:.data.items[1]==\"b\"",
        "-check",
        "json:.code!=5",
    ];
    let hits = checked(
        &server,
        r#"{"code": 0, "data": {"items": ["a", "b"]}}"#,
        20,
        &[&["-rate", "200"], &checks[..]].concat(),
    );
    for h in &hits {
        assert_eq!((h.code, h.error.as_str()), (200, ""));
        // -max-body 0 and no -keep-headers: the checks read them, the
        // record keeps nothing.
        assert!(h.body.is_empty() && h.headers.is_empty());
    }
}

#[test]
fn a_failed_check_is_an_error_record_that_reports_and_fail_on_see() {
    let server = Server::http();
    let dir = tempdir("check-fail");
    // Open model, closed model, closed model pipelined.
    let closed = ["-rate", "0", "-max-workers", "2"];
    let piped = ["-rate", "0", "-max-workers", "2", "-pipeline", "5"];
    for model in [&["-rate", "200"][..], &closed[..], &piped[..]] {
        let flags = [
            model,
            &["-check", "json:.code==0", "-max-body", "4", "-keep-headers"][..],
        ]
        .concat();
        let hits = checked(&server, r#"{"code": 5}"#, 10, &flags);
        for h in &hits {
            assert_eq!(h.code, 200);
            assert_eq!(h.error, "check failed: json .code = 5, want 0");
            assert_eq!(h.body, b"{\"co", "-max-body still bounds the record");
            assert!(h
                .headers
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("x-seen-method") && v == "POST"));
        }
    }
    let hits = checked(
        &server,
        "plain text",
        5,
        &[
            "-rate",
            "200",
            "-check",
            "status=200",
            "-check",
            "body~^\\{",
        ],
    );
    assert!(hits
        .iter()
        .all(|h| h.error == "check failed: body does not match /^\\{/"));
    // The report counts them as failures and lists the error.
    let file = dir.join("r.bin");
    let mut encoded = Vec::new();
    {
        let mut e = barrage_stream::Encoder::new(&mut encoded).unwrap();
        for h in &hits {
            e.write(h).unwrap();
        }
        e.flush().unwrap();
    }
    fs::write(&file, &encoded).unwrap();
    let out = run(
        &["report", "-fail-on", "success<100%", file.to_str().unwrap()],
        b"",
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Success       [ratio]                           0.00%"),
        "{text}"
    );
    assert!(
        text.contains("Status Codes  [code:count]                      200:5"),
        "{text}"
    );
    assert!(
        text.contains("Error Set:\ncheck failed: body does not match /^\\{/"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn bad_checks_are_refused_before_anything_is_sent() {
    refused(
        &["attack", "-check", "json:code==1", "-rate", "1"],
        b"",
        "-check",
    );
    refused(
        &["attack", "-check", "body~(", "-rate", "1"],
        b"",
        "regex parse error",
    );
}

/// Attacks with the http-format `targets` (and `extra` flags), `n`
/// requests; what the server received, sorted by the request's `X-Seq`.
fn templated(
    server: &Server,
    dir: &Path,
    targets: &str,
    n: usize,
    extra: &[&str],
) -> Vec<Received> {
    let file = dir.join("targets.http");
    fs::write(
        &file,
        targets.replace("URL", server.url("").trim_end_matches('/')),
    )
    .unwrap();
    let requests = n.to_string();
    let mut args = vec![
        "attack",
        "-targets",
        file.to_str().unwrap(),
        "-rate",
        "200",
        "-requests",
        &requests,
    ];
    args.extend(extra);
    let hits = decode(&ok(&args, b""));
    assert_eq!(hits.len(), n);
    let mut got = server.received();
    got.sort_by_key(|r| r.header("x-seq").unwrap().parse::<u64>().unwrap());
    got
}

#[test]
fn templates_render_per_request_in_url_headers_and_body() {
    let server = Server::http();
    let dir = tempdir("templates");
    let body = dir.join("body.json");
    fs::write(
        &body,
        r#"{"n": {{seq}}, "id": "{{uuid}}", "dice": {{randint 1 6}}, "at": {{now_ms}}}"#,
    )
    .unwrap();
    let targets = format!(
        "POST URL/items/{{{{seq}}}}?tag={{{{rand 8}}}}\nX-Seq: {{{{seq}}}}\nX-Shard: {{{{shard}}}}\nX-Now: {{{{now}}}}\n@{}\n",
        body.display()
    );
    let got = templated(&server, &dir, &targets, 20, &[]);
    let mut ids = std::collections::HashSet::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    for (seq, r) in got.iter().enumerate() {
        let (path, tag) = r.path.split_once("?tag=").unwrap();
        assert_eq!(path, format!("/items/{seq}"));
        assert!(
            tag.len() == 8 && tag.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{tag}"
        );
        assert_eq!(r.header("x-shard"), Some("0"));
        let secs: u64 = r.header("x-now").unwrap().parse().unwrap();
        assert!(secs.abs_diff(now.as_secs()) < 60);
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["n"], seq as u64);
        assert!((1..=6).contains(&v["dice"].as_i64().unwrap()));
        assert!(v["at"].as_u64().unwrap().abs_diff(now.as_millis() as u64) < 60_000);
        assert!(
            ids.insert(v["id"].as_str().unwrap().to_string()),
            "uuids repeat"
        );
    }
}

#[test]
fn feeds_give_rows_by_seq_or_at_random() {
    let server = Server::http();
    let dir = tempdir("feed");
    let feed = dir.join("users.csv");
    fs::write(&feed, "user,token\nann,t1\nbob,t2\n\"c, d\",t3\n").unwrap();
    let feed = feed.to_str().unwrap();
    let targets = "GET URL/u/{{user}}\nX-Seq: {{seq}}\nAuthorization: Bearer {{token}}\n";
    let got = templated(&server, &dir, targets, 6, &["-feed", feed]);
    let rows = [("ann", "t1"), ("bob", "t2"), ("c,%20d", "t3")];
    for (seq, r) in got.iter().enumerate() {
        let (user, token) = rows[seq % 3];
        assert_eq!(r.path, format!("/u/{user}"));
        assert_eq!(r.header("authorization"), Some(&*format!("Bearer {token}")));
    }
    // -feed-random: every row's token with its own user, in any order.
    let server = Server::http();
    let got = templated(&server, &dir, targets, 30, &["-feed", feed, "-feed-random"]);
    for r in &got {
        let user = r.path.strip_prefix("/u/").unwrap();
        let (_, token) = rows.iter().find(|(u, _)| *u == user).unwrap();
        assert_eq!(r.header("authorization"), Some(&*format!("Bearer {token}")));
    }
    // -lazy renders each target as it is read, for its request.
    let server = Server::http();
    let three = format!("{targets}\n{targets}\n{targets}");
    let got = templated(&server, &dir, &three, 3, &["-feed", feed, "-lazy"]);
    let paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/u/ann", "/u/bob", "/u/c,%20d"]);
}

#[test]
fn unknown_placeholders_and_columns_are_refused_at_file_and_line() {
    let dir = tempdir("template-errors");
    let file = dir.join("t.http");
    fs::write(
        &file,
        "GET http://127.0.0.1:1/\n\nPOST http://127.0.0.1:1/{{user}}\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    refused(
        &["attack", "-targets", f, "-rate", "1"],
        b"",
        &format!("{f}:3: URL: unknown placeholder {{{{user}}}}"),
    );
    let feed = dir.join("f.csv");
    let with_feed = [
        "attack",
        "-targets",
        f,
        "-feed",
        feed.to_str().unwrap(),
        "-rate",
        "1",
    ];
    fs::write(&feed, "name\nann\n").unwrap();
    refused(
        &with_feed,
        b"",
        "unknown placeholder {{user}}: not a -feed column (name)",
    );
    fs::write(&feed, "user,id\nann,1\nbob\n").unwrap();
    refused(&with_feed, b"", &format!("{}:3: ", feed.display()));
    let json = "{\"method\":\"GET\",\"url\":\"http://127.0.0.1:1/\",\"header\":{\"X\":[\"{{randint 9 1}}\"]}}\n";
    refused(
        &["attack", "-format", "json", "-rate", "1"],
        json.as_bytes(),
        "stdin:1: header X: {{randint 9 1}}: A must not be above B",
    );
}

/// Issue 29: a `-feed` value with `#` cut the request at the `#` while
/// the record claimed the whole URL, and `100%` went out as a bad escape.
#[test]
fn feed_values_with_hash_and_percent_arrive_whole() {
    let server = Server::http();
    let dir = tempdir("feed-escapes");
    let feed = dir.join("q.csv");
    fs::write(&feed, "q\na#b\n100%\nx%2Fy\n").unwrap();
    let got = templated(
        &server,
        &dir,
        "GET URL/s?q={{q}}\nX-Seq: {{seq}}\n",
        3,
        &["-feed", feed.to_str().unwrap()],
    );
    let paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/s?q=a%23b", "/s?q=100%25", "/s?q=x%2Fy"]);
}

/// Issue 29: a row that makes a request that cannot be sent aborted the
/// attack mid-run (exit 2, the rest of the schedule missing, neither the
/// file nor the row named). Every row is tried first.
#[test]
fn a_bad_feed_row_is_refused_before_the_first_request() {
    let server = Server::http();
    let dir = tempdir("feed-bad-row");
    let feed = dir.join("t.csv");
    fs::write(&feed, "token\nt1\nt2\n\"t3\rX-Evil: 1\"\nt4\n").unwrap();
    let targets = dir.join("t.http");
    fs::write(
        &targets,
        format!(
            "GET {}\nAuthorization: Bearer {{{{token}}}}\n",
            server.url("/")
        ),
    )
    .unwrap();
    refused(
        &[
            "attack",
            "-targets",
            targets.to_str().unwrap(),
            "-feed",
            feed.to_str().unwrap(),
            "-rate",
            "100",
            "-requests",
            "4",
        ],
        b"",
        &format!("-feed {}:4: bad header: Authorization", feed.display()),
    );
    assert_eq!(server.count(), 0, "nothing was sent");
}

#[test]
fn inputs_without_end_are_refused_at_their_limit() {
    let dir = tempdir("limits");
    let curl = dir.join("c.txt");
    fs::write(&curl, "curl -d @/dev/zero http://127.0.0.1:1/\n").unwrap();
    let curl = curl.to_str().unwrap();
    let big = dir.join("rand.txt");
    fs::write(&big, "{{rand 4096}}".repeat(80_000)).unwrap();
    let body_targets = format!("POST http://127.0.0.1:1/\n@{}\n", big.display());
    let url = "GET http://127.0.0.1:1/{{a}}\n";
    let cases: [(&[&str], &str, &str); 7] = [
        (
            &["-targets", "/dev/zero"],
            "",
            "/dev/zero:1: a line longer than 64 MiB (the limit for one line)",
        ),
        (
            &["-format", "json", "-targets", "/dev/zero"],
            "",
            "/dev/zero:1: a line longer than 64 MiB (the limit for one line)",
        ),
        (
            &["-format", "curl", "-targets", "/dev/zero"],
            "",
            "/dev/zero:1: larger than 256 MiB (the limit for a curl or HAR file)",
        ),
        (
            &["-format", "curl", "-targets", curl],
            "",
            "c.txt:1: -d @/dev/zero: a device, not a file or a pipe",
        ),
        (
            &["-body", "/dev/zero"],
            "GET http://127.0.0.1:1/\n",
            "-body /dev/zero: a device, not a file or a pipe",
        ),
        (
            &["-feed", "/dev/zero"],
            url,
            "-feed /dev/zero: a device, not a file or a pipe",
        ),
        (
            &[],
            &body_targets,
            "stdin:1: renders up to 312 MiB a request, over the limit of 64 MiB",
        ),
    ];
    for (args, stdin, want) in cases {
        let mut all = vec!["attack", "-rate", "1", "-duration", "1s"];
        all.extend(args);
        refused(&all, stdin.as_bytes(), want);
    }
}

#[test]
fn a_byte_order_mark_a_curl_config_and_files_read_are_handled() {
    let dir = tempdir("bom");
    let server = Server::http();
    let url = server.url("/");
    // A byte-order mark at the start of an http, JSON or curl file is
    // skipped.
    let cases = [
        ("t.http", "http", format!("\u{feff}GET {url}\n")),
        (
            "t.json",
            "json",
            format!("\u{feff}{{\"method\":\"GET\",\"url\":\"{url}\"}}\n"),
        ),
        ("t.curl", "curl", format!("\u{feff}curl {url}\n")),
    ];
    for (name, format, text) in cases {
        let file = dir.join(name);
        fs::write(&file, text).unwrap();
        let f = file.to_str().unwrap();
        let out = ok(
            &[
                "attack",
                "-format",
                format,
                "-targets",
                f,
                "-rate",
                "10",
                "-requests",
                "1",
            ],
            b"",
        );
        let hits = decode(&out);
        assert_eq!((hits.len(), hits[0].code), (1, 200), "{name}");
    }
    // curl's -K/--config is refused, not ignored.
    let file = dir.join("k.curl");
    fs::write(&file, format!("curl -K more.txt {url}\n")).unwrap();
    let f = file.to_str().unwrap();
    refused(
        &["attack", "-format", "curl", "-targets", f, "-rate", "1"],
        b"",
        "k.curl:1: -K: barrage does not read curl's config files",
    );
    // A file a command reads is named once on stderr.
    let body = dir.join("d.json");
    fs::write(&body, "{\"a\":1}").unwrap();
    let file = dir.join("d.curl");
    fs::write(
        &file,
        format!(
            "curl -d @{b} {url}\ncurl --data-binary @{b} {url}\n",
            b = body.display()
        ),
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = run(
        &[
            "attack",
            "-format",
            "curl",
            "-targets",
            f,
            "-rate",
            "10",
            "-requests",
            "2",
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("read ")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].ends_with(&format!("d.curl:1: -d: read {} (7 bytes)", body.display())),
        "{err}"
    );
    // -har-filter's regex error says what and where.
    refused(
        &[
            "attack",
            "-format",
            "har",
            "-har-filter",
            "ab[",
            "-rate",
            "1",
        ],
        b"",
        "unclosed character class (at byte 2 of the pattern)",
    );
}
