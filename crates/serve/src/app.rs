//! A small stateful app, for flows (`-format flow`): `barrage serve`
//! and the tests' server answer these routes with it:
//! each session logs in, then must carry its token and its cookie, and
//! read back only the items it made.
//!
//! | request | answer |
//! |---|---|
//! | `POST /login` (any body) | 200 `{"access_token":"t-N","user":N}` and `Set-Cookie: sid=c-N` |
//! | `POST /form-login` (any body) | 303 to `/home` with `Set-Cookie: sid=c-N` (a form's login) |
//! | `GET /home` | 200 `{"user":N}` with the cookie `sid=c-N` of one login; else 401 |
//! | `GET /me` | 200 `{"user":N}` with `Authorization: Bearer t-N` and the cookie `sid=c-N` of one login; else 401 |
//! | `POST /items` | 201 `{"id":M}`, the item owned by the caller's login; 401 without one |
//! | `GET /items/M` | 200 `{"id":M}` for its owner; 404 for anyone else; 401 without a login |
//!
//! [`AppTally`] counts what it answered.

use std::{collections::HashMap, sync::Mutex};

use hyper::http::{self, request::Parts};

/// What the app answered, counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AppTally {
    /// Logins answered.
    pub logins: u64,
    /// `GET /me` with the right token and cookie.
    pub me: u64,
    /// Items made.
    pub made: u64,
    /// Items read back by their owner.
    pub read: u64,
    /// Requests refused: 401 (no login, or a token and cookie of two
    /// logins) and 404 (an item not the caller's).
    pub refused: u64,
}

#[derive(Default)]
struct Inner {
    /// Login number by token.
    logins: HashMap<String, u64>,
    /// Owner's login number by item id.
    items: HashMap<u64, u64>,
    tally: AppTally,
}

/// The app's state: its logins and items.
#[derive(Default)]
pub struct App(Mutex<Inner>);

/// A JSON answer.
fn json(status: u16, body: String) -> http::Response<String> {
    let mut r = http::Response::new(body);
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

impl App {
    /// Counts so far.
    pub fn tally(&self) -> AppTally {
        self.0.lock().map(|i| i.tally).unwrap_or_default()
    }

    /// The app's answer, if `segs` (the path's segments) is one of its
    /// routes.
    pub fn route(&self, parts: &Parts, segs: &[&str]) -> Option<http::Response<String>> {
        let post = parts.method == http::Method::POST;
        let mut inner = self.0.lock().ok()?;
        let inner = &mut *inner;
        let who = caller(&inner.logins, parts);
        let answer = match (segs, post) {
            (["login"], true) => {
                let n = inner.logins.len() as u64 + 1;
                inner.logins.insert(format!("t-{n}"), n);
                inner.tally.logins += 1;
                let mut r = json(200, format!(r#"{{"access_token":"t-{n}","user":{n}}}"#));
                if let Ok(v) = format!("sid=c-{n}; Path=/; HttpOnly").parse() {
                    r.headers_mut().insert(http::header::SET_COOKIE, v);
                }
                r
            }
            (["form-login"], true) => {
                let n = inner.logins.len() as u64 + 1;
                inner.logins.insert(format!("t-{n}"), n);
                inner.tally.logins += 1;
                let mut r = json(303, String::new());
                let headers = r.headers_mut();
                if let Ok(v) = format!("sid=c-{n}; Path=/; HttpOnly").parse() {
                    headers.insert(http::header::SET_COOKIE, v);
                }
                headers.insert(
                    http::header::LOCATION,
                    http::HeaderValue::from_static("/home"),
                );
                r
            }
            (["home"], false) => {
                let who = sid(parts).filter(|n| inner.logins.contains_key(&format!("t-{n}")));
                me(&mut inner.tally, who)
            }
            (["me"], false) => me(&mut inner.tally, who),
            (["items"], true) => match who {
                Some(n) => {
                    let id = inner.items.len() as u64 + 1;
                    inner.items.insert(id, n);
                    inner.tally.made += 1;
                    json(201, format!(r#"{{"id":{id}}}"#))
                }
                None => {
                    inner.tally.refused += 1;
                    json(401, r#"{"error":"log in"}"#.into())
                }
            },
            (["items", id], false) => {
                let id: Option<u64> = id.parse().ok();
                match (who, id.and_then(|id| inner.items.get(&id).copied())) {
                    (Some(n), Some(owner)) if n == owner => {
                        inner.tally.read += 1;
                        json(200, format!(r#"{{"id":{}}}"#, id.unwrap_or_default()))
                    }
                    (Some(_), _) => {
                        inner.tally.refused += 1;
                        json(404, r#"{"error":"no such item of yours"}"#.into())
                    }
                    (None, _) => {
                        inner.tally.refused += 1;
                        json(401, r#"{"error":"log in"}"#.into())
                    }
                }
            }
            _ => return None,
        };
        Some(answer)
    }
}

/// `/me`'s answer (and `/home`'s) for the caller's login `who`.
fn me(tally: &mut AppTally, who: Option<u64>) -> http::Response<String> {
    match who {
        Some(n) => {
            tally.me += 1;
            json(200, format!(r#"{{"user":{n}}}"#))
        }
        None => {
            tally.refused += 1;
            json(401, r#"{"error":"log in"}"#.into())
        }
    }
}

/// The login number of the `sid` cookie a request carries.
fn sid(parts: &Parts) -> Option<u64> {
    parts
        .headers
        .get_all(http::header::COOKIE)
        .into_iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix("sid=c-")?.parse().ok())
}

/// The caller's login: its bearer token's, when it also carries the
/// cookie of the same login.
fn caller(logins: &HashMap<String, u64>, parts: &Parts) -> Option<u64> {
    let values = |name: http::header::HeaderName| {
        parts
            .headers
            .get_all(name)
            .into_iter()
            .filter_map(|v| v.to_str().ok())
    };
    let token = values(http::header::AUTHORIZATION).find_map(|v| v.strip_prefix("Bearer "))?;
    let n = *logins.get(token.trim())?;
    let sid = format!("c-{n}");
    values(http::header::COOKIE)
        .flat_map(|v| v.split(';'))
        .any(|c| c.trim().strip_prefix("sid=") == Some(sid.as_str()))
        .then_some(n)
}
