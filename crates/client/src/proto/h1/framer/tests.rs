use super::*;

fn limits() -> Limits {
    Limits {
        head_bytes: 64 * 1024,
        keep_body: -1,
        keep_headers: true,
        jar_only: false,
        stream: false,
    }
}

/// Feeds `wire` in pieces of `step` bytes; the framer's end state and
/// how many bytes the response took.
fn read(wire: &[u8], step: usize, head: bool) -> (Framer, Result<usize, FrameError>) {
    let mut f = Framer::new(limits(), head);
    let mut at = 0;
    while at < wire.len() {
        let end = (at + step).min(wire.len());
        match f.feed(&wire[at..end]) {
            Ok(Fed::More) => at = end,
            Ok(Fed::Complete(n)) => return (f, Ok(at + n)),
            Err(e) => return (f, Err(e)),
        }
    }
    let r = f.eof().map(|()| wire.len());
    (f, r)
}

/// Every piece size gives the same response.
fn each_step(wire: &[u8], head: bool, check: impl Fn(&Framer, Result<usize, FrameError>)) {
    for step in [1, 2, 3, 7, 64, wire.len().max(1)] {
        let (f, r) = read(wire, step, head);
        check(&f, r);
    }
}

#[test]
fn content_length_in_any_pieces() {
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhelloNEXT";
    each_step(wire, false, |f, r| {
        assert_eq!(r, Ok(wire.len() - 4));
        assert_eq!(f.head.code, 200);
        assert_eq!(f.head.reason, "OK");
        assert_eq!(f.body, b"hello");
        assert_eq!(f.bytes_in, 5);
        assert!(f.reusable());
        assert_eq!(f.head.headers[1], ("X-A".to_string(), "b".to_string()));
    });
}

#[test]
fn chunked_with_extensions_and_trailers() {
    let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
        5;name=value\r\nhello\r\n6 ; x=\"y\"\r\n world\r\n0;last\r\nX-Trailer: 1\r\nX-Other: 2\r\n\r\nNEXT";
    each_step(wire, false, |f, r| {
        assert_eq!(r, Ok(wire.len() - 4));
        assert_eq!(f.body, b"hello world");
        assert!(f.reusable());
    });
    let plain = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    each_step(plain, false, |f, r| {
        assert_eq!(r, Ok(plain.len()));
        assert_eq!(f.body, b"abc");
    });
}

#[test]
fn interim_responses_are_skipped_up_to_five() {
    let wire = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
        HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok";
    each_step(wire, false, |f, r| {
        assert_eq!(r, Ok(wire.len()));
        assert_eq!((f.head.code, &f.body[..]), (201, &b"ok"[..]));
    });
    let mut endless = Vec::new();
    for _ in 0..6 {
        endless.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
    }
    each_step(&endless, false, |_, r| {
        assert_eq!(r, Err(FrameError::TooManyInterim));
    });
}

#[test]
fn no_body_for_head_204_and_304() {
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
    each_step(wire, true, |f, r| {
        assert_eq!(r, Ok(wire.len()));
        assert_eq!((f.head.code, f.bytes_in), (200, 0));
        assert!(f.reusable());
    });
    for code in [204, 304] {
        let wire = format!("HTTP/1.1 {code} X\r\nContent-Length: 10\r\n\r\n");
        each_step(wire.as_bytes(), false, |f, r| {
            assert_eq!(r, Ok(wire.len()));
            assert_eq!((f.head.code, f.bytes_in), (code, 0));
        });
    }
}

#[test]
fn body_until_close_and_http_1_0() {
    let wire = b"HTTP/1.1 200 OK\r\n\r\nall of this";
    each_step(wire, false, |f, r| {
        assert_eq!(r, Ok(wire.len()));
        assert_eq!(f.body, b"all of this");
        assert!(!f.reusable());
    });
    let old = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi";
    each_step(old, false, |f, r| {
        assert_eq!(r, Ok(old.len()));
        assert!(!f.reusable(), "HTTP/1.0 without keep-alive closes");
    });
    let kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nhi";
    let (f, _) = read(kept, kept.len(), false);
    assert!(f.reusable());
    let close = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n";
    let (f, _) = read(close, close.len(), false);
    assert!(!f.reusable());
}

#[test]
fn a_response_cut_short_is_an_eof() {
    for wire in [
        &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"[..],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        b"HTTP/1.1 200 O",
    ] {
        let (_, r) = read(wire, wire.len(), false);
        assert_eq!(r, Err(FrameError::Eof), "{}", String::from_utf8_lossy(wire));
    }
    assert!(!Framer::new(limits(), false).started());
}

#[test]
fn head_limits() {
    let mut big = b"HTTP/1.1 200 OK\r\n".to_vec();
    while big.len() < 70 * 1024 {
        big.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
    }
    big.extend_from_slice(b"Content-Length: 0\r\n\r\n");
    for step in [1, 1000, big.len()] {
        let (f, r) = read(&big, step, false);
        assert_eq!(r, Err(FrameError::HeadTooLarge(64 * 1024)), "{step}");
        assert!(f.partial.len() <= 64 * 1024 + 4, "bounded");
    }
    // Many headers within the limit: no cap on their count.
    let mut many = b"HTTP/1.1 200 OK\r\n".to_vec();
    for i in 0..1000 {
        many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"Content-Length: 1\r\n\r\nz");
    each_step(&many, false, |f, r| {
        assert_eq!(r, Ok(many.len()));
        assert_eq!(f.head.headers.len(), 1001);
    });
}

#[test]
fn odd_but_readable_heads_are_responses() {
    for (wire, code, reason) in [
        (
            &b"HTTP/1.1 503 Backend Down\r\nContent-Length: 0\r\n\r\n"[..],
            503,
            "Backend Down",
        ),
        (
            b"HTTP/1.1 999 Weird\r\nContent-Length: 0\r\n\r\n",
            999,
            "Weird",
        ),
        (b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 200, ""),
        (b"HTTP/1.1 200 OK\nContent-Length: 0\n\n", 200, "OK"),
        (
            b"HTTP/1.1 200 OK\r\nX-Fold: a\r\n  b\r\nContent-Length: 0\r\n\r\n",
            200,
            "OK",
        ),
        (
            b"HTTP/1.1 200 OK\r\nX-Nul: a\0b\r\nContent-Length: 0\r\n\r\n",
            200,
            "OK",
        ),
        (
            b"HTTP/1.1 200 OK\r\nX-Space : a\r\nContent-Length: 0\r\n\r\n",
            200,
            "OK",
        ),
    ] {
        each_step(wire, false, |f, r| {
            assert_eq!(r, Ok(wire.len()), "{:?}", String::from_utf8_lossy(wire));
            assert_eq!((f.head.code, f.head.reason.as_ref()), (code, reason));
        });
    }
}

#[test]
fn malformed_heads_name_the_line() {
    let (_, r) = read(b"HTTP/1.1 2x0 OK\r\n\r\n", 100, false);
    let e = r.unwrap_err().to_string();
    assert!(e.contains("status line") && e.contains("2x0"), "{e}");
    let (_, r) = read(b"SMTP ready\r\n\r\n", 100, false);
    assert!(r.unwrap_err().to_string().contains("SMTP ready"));
    let (_, r) = read(
        b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\n",
        100,
        false,
    );
    assert!(matches!(r, Err(FrameError::BadLength(_))));
    let (_, r) = read(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        100,
        false,
    );
    assert_eq!(r, Err(FrameError::BadChunk));
}

#[test]
fn kept_body_is_bounded() {
    let mut f = Framer::new(
        Limits {
            keep_body: 3,
            ..limits()
        },
        false,
    );
    let wire = b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nLocation: /x\r\n\r\nabcdef";
    assert_eq!(f.feed(wire), Ok(Fed::Complete(wire.len())));
    assert_eq!((f.body.as_slice(), f.bytes_in), (&b"abc"[..], 6));
    assert_eq!(f.head.location, None, "only a 3xx's Location is kept");
}

#[test]
fn a_jar_alone_keeps_only_set_cookie_and_location_lines() {
    let mut f = Framer::new(
        Limits {
            jar_only: true,
            ..limits()
        },
        false,
    );
    let wire = b"HTTP/1.1 302 Found\r\nServer: x\r\nSet-Cookie: a=1\r\nContent-Length: 0\r\nLocation: /me\r\nset-cookie: b=2\r\n\r\n";
    assert_eq!(f.feed(wire), Ok(Fed::Complete(wire.len())));
    assert_eq!(
        f.head.headers,
        [
            ("Set-Cookie".to_string(), "a=1".to_string()),
            ("Location".to_string(), "/me".to_string()),
            ("set-cookie".to_string(), "b=2".to_string())
        ]
    );
}
