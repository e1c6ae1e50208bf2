//! The stateful app (`barrage_serve::App`) on the test server.

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    /// One HTTP/1.1 request on a connection of its own: the status and
    /// the answer's text.
    fn ask(server: &crate::Server, head: &str) -> (u16, String) {
        let mut c = std::net::TcpStream::connect(server.addr()).unwrap();
        write!(
            c,
            "{head}\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        c.read_to_string(&mut text).unwrap();
        let status = text[9..12].parse().unwrap();
        (status, text)
    }

    #[test]
    fn a_session_carries_its_token_cookie_and_items() {
        let server = crate::Server::http();
        let (code, login) = ask(&server, "POST /login HTTP/1.1");
        assert_eq!(code, 200);
        assert!(
            login.contains(r#"{"access_token":"t-1","user":1}"#),
            "{login}"
        );
        assert!(
            login
                .to_lowercase()
                .contains("set-cookie: sid=c-1; path=/; httponly"),
            "{login}"
        );
        ask(&server, "POST /login HTTP/1.1");
        let auth = "Authorization: Bearer t-1\r\nCookie: a=b; sid=c-1";
        assert_eq!(ask(&server, &format!("GET /me HTTP/1.1\r\n{auth}")).0, 200);
        let (code, made) = ask(&server, &format!("POST /items HTTP/1.1\r\n{auth}"));
        assert_eq!(code, 201);
        assert!(made.ends_with(r#"{"id":1}"#), "{made}");
        assert_eq!(
            ask(&server, &format!("GET /items/1 HTTP/1.1\r\n{auth}")).0,
            200
        );
        // The second login's token with the first's cookie, no cookie,
        // no token; another's item.
        let mixed = "Authorization: Bearer t-2\r\nCookie: sid=c-1";
        assert_eq!(ask(&server, &format!("GET /me HTTP/1.1\r\n{mixed}")).0, 401);
        assert_eq!(
            ask(&server, "GET /me HTTP/1.1\r\nAuthorization: Bearer t-1").0,
            401
        );
        assert_eq!(ask(&server, "GET /me HTTP/1.1\r\nCookie: sid=c-1").0, 401);
        let other = "Authorization: Bearer t-2\r\nCookie: sid=c-2";
        assert_eq!(
            ask(&server, &format!("GET /items/1 HTTP/1.1\r\n{other}")).0,
            404
        );
        assert_eq!(
            server.app(),
            barrage_serve::AppTally {
                logins: 2,
                me: 1,
                made: 1,
                read: 1,
                refused: 4
            }
        );
    }
}
