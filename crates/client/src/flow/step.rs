//! A flow's step (`-format flow`): sent as any request, then judged by
//! the attack's `-check`s and the step's own, its `Set-Cookie`s kept in
//! the session's jar, and its `:extract`s taken into the session's
//! variables, before the record drops what it does not keep.

use std::sync::Arc;

use crate::{core::observe::Unobserved, Checks, Client, Extract, PreparedTarget, Response};

/// The most cookies a session's jar holds: past it, the step fails.
pub const MAX_COOKIES: usize = 300;

/// The largest cookie a jar keeps, name and value (browsers' 4 KiB).
pub const MAX_COOKIE_BYTES: usize = 4096;

/// What a session's jar holds at most, names and values.
pub const MAX_JAR_BYTES: usize = 256 << 10;

/// What a step reads from its answer.
#[derive(Debug, Default)]
pub struct StepReads {
    /// Its `:check`s (after the attack's `-check`s).
    pub checks: Option<Checks>,
    /// Its `:extract`s: the variable's column, its name, and what it takes.
    pub extracts: Vec<(usize, String, Extract)>,
}

impl StepReads {
    /// Whether an answer's body must be kept for it.
    pub fn need_body(&self) -> bool {
        self.checks.as_ref().is_some_and(Checks::need_body)
            || self.extracts.iter().any(|(_, _, e)| e.needs_body())
    }

    /// Whether an answer's headers must be kept for it.
    pub fn need_headers(&self) -> bool {
        self.checks.as_ref().is_some_and(Checks::need_headers)
            || self.extracts.iter().any(|(_, _, e)| e.needs_headers())
    }
}

/// What a session carries from one step to the next.
#[derive(Default)]
pub struct SessionState {
    /// The template columns' values: the `-feed` row, then the variables
    /// (empty until set).
    pub vars: Vec<String>,
    /// Its cookies (`None`: `-cookies=false`).
    pub jar: Option<cookie_store::CookieStore>,
    /// Its HTTP/1.1 connection, held from its first answer to its end,
    /// think time included (no other session's request goes on it
    /// meanwhile), then given back to the pool ([`Client::end_session`]).
    kept: crate::send::HeldConn,
}

impl SessionState {
    /// A session's state: its values and its jar.
    pub fn new(vars: Vec<String>, jar: Option<cookie_store::CookieStore>) -> Self {
        SessionState {
            vars,
            jar,
            kept: Default::default(),
        }
    }

    /// The `Cookie` header's value the jar has for `url`, if any.
    pub fn cookie_header(&self, url: &str) -> Option<String> {
        // An empty jar (most flows' first step, and flows whose server
        // sets none) parses no URL: two parses a step were 3% of a flow's
        // CPU against nginx.
        let jar = self
            .jar
            .as_ref()
            .filter(|j| j.iter_any().next().is_some())?;
        let url = url::Url::parse(url).ok()?;
        let pairs: Vec<String> = jar
            .get_request_values(&url)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        (!pairs.is_empty()).then(|| pairs.join("; "))
    }

    /// Keeps the `Set-Cookie`s of an answer from `url`; why not, when the
    /// jar would hold more than [`MAX_COOKIES`].
    fn keep_cookies(&mut self, url: &str, headers: &[(String, String)]) -> Result<(), JarFull> {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
        {
            return Ok(());
        }
        let (Some(jar), Ok(url)) = (self.jar.as_mut(), url::Url::parse(url)) else {
            return Ok(());
        };
        // A cookie over 4 KiB (name and value) is ignored, as browsers
        // do (one session sent a 12.9 MB Cookie header).
        let set = headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
            .filter_map(|(_, v)| cookie_store::RawCookie::parse(v.clone()).ok())
            .filter(|c| c.name().len() + c.value().len() <= MAX_COOKIE_BYTES);
        jar.store_response_cookies(set, &url);
        let held = jar.iter_any().count();
        if held > MAX_COOKIES {
            return Err(JarFull::Cookies(held));
        }
        let bytes: usize = jar
            .iter_any()
            .map(|c| c.name().len() + c.value().len())
            .sum();
        if bytes > MAX_JAR_BYTES {
            return Err(JarFull::Bytes(bytes));
        }
        Ok(())
    }
}

/// Why a session's cookie jar takes no more.
#[derive(Debug, thiserror::Error)]
enum JarFull {
    #[error("cookie jar full: {0} cookies, over the {MAX_COOKIES} a session holds")]
    Cookies(usize),
    #[error("cookie jar full: {0} bytes of cookies, over the {kib} KiB a session holds", kib = MAX_JAR_BYTES >> 10)]
    Bytes(usize),
}

/// A 3xx answer's `Location`.
fn location(r: &Response) -> Option<String> {
    if !(300..400).contains(&r.code) {
        return None;
    }
    r.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("location"))
        .map(|(_, v)| v.clone())
}

/// The request of a redirect from `from` (answered `code` with
/// `location`) to `to`: as Go sends it, GET without a body after a 301,
/// 302 or 303 (but HEAD), else as before; the step's headers as Go
/// carries them (`carry`: what the hops before dropped), its `Cookie` the
/// jar's for `to`.
fn hop_target(
    step: &PreparedTarget,
    from: &PreparedTarget,
    (code, location): (u16, &[u8]),
    to: &http::Uri,
    carry: &mut crate::send::carry::Carry,
    session: &SessionState,
) -> Result<PreparedTarget, crate::Failure> {
    let (method, body) = match code {
        301..=303 if from.method != http::Method::HEAD => ("GET".to_string(), bytes::Bytes::new()),
        _ => (from.method_text.clone(), from.body.clone()),
    };
    let redirect = crate::send::carry::Redirect {
        first: &step.uri,
        from: &from.uri,
        to,
        code,
        location,
    };
    let mut headers = redirect.headers(&step.header_lines, carry);
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case("cookie"));
    let url = to.to_string();
    if let Some(c) = session.cookie_header(&url) {
        headers.push(("Cookie".into(), c));
    }
    PreparedTarget::new(barrage_model::Target {
        method,
        url,
        headers,
        body,
        ..Default::default()
    })
}

impl Client {
    /// Gives a session's held connection back to the pool, at its end.
    pub fn end_session(&self, session: &mut SessionState) {
        if let Some(conn) = session.kept.conn.take() {
            if let Some(key) = &session.kept.key {
                self.pool.put(key, conn);
            }
        }
    }

    /// One request of a step (its redirects not followed when the jar
    /// follows them), on the session's held connection where it has one.
    async fn step_once(
        &self,
        target: &Arc<PreparedTarget>,
        seq: u64,
        session: &mut SessionState,
    ) -> Result<Response, crate::Failure> {
        let kept = self.hold.then_some(&mut session.kept);
        if let Some(tape) = self.tape_for(target) {
            let exchange = Box::pin(self.exchange(target, seq, kept, crate::events::OnTask));
            Box::pin(self.taped(target, tape, exchange)).await
        } else {
            let exchange = Box::pin(self.exchange(target, seq, kept, Unobserved));
            self.limited(target, exchange).await
        }
    }

    /// Sends a flow's step for `target` as request `seq`: the attack's
    /// `-check`s and then `reads`' checks judge it; its cookies go into
    /// `session`'s jar and, when it is so far a success, its extractions
    /// into `session`'s variables (a miss fails it: `extract token: json
    /// .access_token not found`).
    pub async fn send_step(
        &self,
        target: &Arc<PreparedTarget>,
        seq: u64,
        reads: &StepReads,
        session: &mut SessionState,
    ) -> Result<Response, crate::Failure> {
        let mut r = self.step_once(target, seq, session).await?;
        // The URL that gave the answer: the target's, or a redirect's.
        let mut hop = target.clone();
        if let Some(most) = self.step_redirects {
            // The jar follows the step's redirects itself, as Go's client
            // with a jar does: a login's 302 sets the cookie its Location
            // then needs.
            // `-timeout` bounds the step with its hops, as it bounds a
            // request with its redirects.
            let deadline = self
                .timeout_for(target)
                .map(|t| (tokio::time::Instant::now() + t, t));
            let mut followed = 0;
            let mut carry = crate::send::carry::Carry::default();
            // The connections of the hops before the answer, added up.
            let mut before: Option<barrage_model::Link> = None;
            while let Some(loc) = location(&r) {
                if let Err(e) = session.keep_cookies(&hop.url_text, &r.headers) {
                    r.error = Some(e.to_string());
                    break;
                }
                let fail = |e: &dyn std::fmt::Display| {
                    crate::Failure(format!(
                        "{} \"{}\": {e}",
                        crate::core::error::go_op(hop.method.as_str()),
                        hop.url_shown()
                    ))
                };
                if followed >= most {
                    return Err(fail(&format!("stopped after {most} redirects")));
                }
                let to = crate::send::redirect::resolve(&hop.uri, loc.as_bytes())
                    .map_err(|e| fail(&e))?;
                let answered = (r.code, loc.as_bytes());
                let next = hop_target(target, &hop, answered, &to, &mut carry, session)
                    .map_err(|e| fail(&e))?;
                hop = Arc::new(next);
                followed += 1;
                if let Some(via) = &r.link {
                    before = Some(before.map_or(via.link(), |b| b.then(via.link())));
                }
                let next = self.step_once(&hop, seq, session);
                r = match deadline {
                    Some((at, t)) => tokio::time::timeout_at(at, next)
                        .await
                        .unwrap_or_else(|_| Err(crate::send::words::timed_out(target, t)))?,
                    None => next.await?,
                };
            }
            if let (Some(b), Some(via)) = (before, &r.link) {
                r.link = Some(crate::Via::from(b.then(via.link())));
            }
        }
        let judged = r.error.is_none() && (200..400).contains(&r.code);
        if judged {
            // A streamed answer's checks read its events (`-stream`).
            let seen = r
                .events
                .as_ref()
                .map_or_else(crate::Seen::default, |e| crate::Seen {
                    count: e.1.count,
                    matched: &e.1.matched,
                });
            r.error = [self.checks.as_deref(), reads.checks.as_ref()]
                .into_iter()
                .flatten()
                .find_map(|c| c.verdict_streamed(r.code, &r.body, &r.headers, &seen));
        }
        if let Err(e) = session.keep_cookies(&hop.url_text, &r.headers) {
            r.error.get_or_insert(e.to_string());
        }
        if judged && r.error.is_none() {
            for (column, var, extract) in &reads.extracts {
                let limit = self.record_body.max(crate::CHECK_BODY_BYTES) as usize;
                match extract.apply(r.code, &r.body, &r.headers, limit) {
                    Ok(v) => {
                        if let Some(slot) = session.vars.get_mut(*column) {
                            *slot = v;
                        }
                    }
                    Err(why) => {
                        r.error = Some(format!("extract {var}: {why}"));
                        break;
                    }
                }
            }
        }
        r.body.truncate(self.record_body.max(0) as usize);
        if !self.record_headers {
            r.headers = Vec::new();
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jar_bounds_its_bytes_as_browsers_do() {
        let mut s = SessionState::new(Vec::new(), Some(cookie_store::CookieStore::default()));
        let set = |v: &str| vec![("Set-Cookie".to_string(), v.to_string())];
        // Over 4 KiB: ignored.
        let big = format!("big={}; Path=/", "x".repeat(MAX_COOKIE_BYTES));
        s.keep_cookies("http://a.test/", &set(&big)).unwrap();
        assert_eq!(s.cookie_header("http://a.test/"), None);
        // Many of nearly 4 KiB: the jar's bytes are bounded.
        let mut last = Ok(());
        for i in 0..100 {
            let c = format!("c{i}={}; Path=/", "y".repeat(4000));
            last = s.keep_cookies("http://a.test/", &set(&c));
            if last.is_err() {
                break;
            }
        }
        let e = last.unwrap_err().to_string();
        assert!(e.contains("over the 256 KiB a session holds"), "{e}");
    }

    #[test]
    fn a_jar_keeps_cookies_by_url_and_refuses_past_its_cap() {
        let mut s = SessionState::new(Vec::new(), Some(cookie_store::CookieStore::default()));
        let set = |v: &str| vec![("Set-Cookie".to_string(), v.to_string())];
        s.keep_cookies("http://a.test/login", &set("sid=1; Path=/"))
            .unwrap();
        s.keep_cookies("http://a.test/login", &set("api=2; Path=/api"))
            .unwrap();
        assert_eq!(
            s.cookie_header("http://a.test/me").as_deref(),
            Some("sid=1")
        );
        let mut both = s.cookie_header("http://a.test/api/x").unwrap();
        both = both
            .split("; ")
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join("; ");
        assert_eq!(both, "api=2; sid=1");
        assert_eq!(s.cookie_header("http://b.test/"), None);
        let many: Vec<(String, String)> = (0..MAX_COOKIES)
            .map(|i| ("Set-Cookie".to_string(), format!("c{i}=x; Path=/")))
            .collect();
        let e = s
            .keep_cookies("http://a.test/", &many)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cookie jar full: 302 cookies"), "{e}");
        let off = SessionState::default();
        assert_eq!(off.cookie_header("http://a.test/"), None);
    }
}
