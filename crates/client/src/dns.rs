//! `-resolvers`: host names looked up with the given DNS servers instead
//! of the system's, over UDP: an A and an AAAA query to each server in
//! turn until one answers.

use std::{
    io,
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    time::Duration,
};

use tokio::net::UdpSocket;

/// How long one server has to answer both queries.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;

/// `name`'s addresses (IPv4 first) from the first of `servers` that
/// answers; "no such host" when one says the name does not exist.
pub(crate) async fn lookup(
    name: &str,
    port: u16,
    servers: &[SocketAddr],
) -> io::Result<Vec<SocketAddr>> {
    let mut last = io::Error::other("no DNS server answered");
    for &server in servers {
        match ask(name, server).await {
            Ok(ips) if ips.is_empty() => last = io::Error::other("no such host"),
            Ok(ips) => {
                return Ok(ips
                    .into_iter()
                    .map(|ip| SocketAddr::new(ip, port))
                    .collect())
            }
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// The A and AAAA records one server gives for `name`.
async fn ask(name: &str, server: SocketAddr) -> io::Result<Vec<IpAddr>> {
    let bind: SocketAddr = if server.is_ipv4() {
        (Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let socket = UdpSocket::bind(bind).await?;
    socket.connect(server).await?;
    let id = query_id();
    for (i, qtype) in [TYPE_A, TYPE_AAAA].into_iter().enumerate() {
        socket
            .send(&query(id.wrapping_add(i as u16), name, qtype)?)
            .await?;
    }
    let mut v4 = Vec::new();
    let mut v6 = Vec::new();
    let mut answered = [false; 2];
    let mut buf = [0u8; 1500];
    let deadline = tokio::time::Instant::now() + ANSWER_TIMEOUT;
    while answered != [true, true] {
        let Ok(got) = tokio::time::timeout_at(deadline, socket.recv(&mut buf)).await else {
            // One answer is enough when it has addresses.
            if v4.is_empty() && v6.is_empty() {
                return Err(io::Error::other(format!(
                    "no answer from DNS server {server}"
                )));
            }
            break;
        };
        let n = got?;
        let Some(reply) = parse(&buf[..n]) else {
            continue;
        };
        let Some(i) = [id, id.wrapping_add(1)].iter().position(|q| *q == reply.id) else {
            continue;
        };
        if answered[i] {
            continue;
        }
        answered[i] = true;
        if reply.no_such_name {
            return Ok(Vec::new());
        }
        for ip in reply.ips {
            match ip {
                IpAddr::V4(_) => v4.push(ip),
                IpAddr::V6(_) => v6.push(ip),
            }
        }
    }
    v4.extend(v6);
    Ok(v4)
}

fn query_id() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (nanos ^ (nanos >> 16)) as u16
}

/// A recursive query for `name`'s records of `qtype`.
fn query(id: u16, name: &str, qtype: u16) -> io::Result<Vec<u8>> {
    let mut q = Vec::with_capacity(18 + name.len());
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(io::Error::other(format!("bad host name {name:?}")));
        }
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&1u16.to_be_bytes());
    Ok(q)
}

/// What a reply says; `None` for anything that is not a well-formed reply.
struct Reply {
    id: u16,
    no_such_name: bool,
    ips: Vec<IpAddr>,
}

fn parse(p: &[u8]) -> Option<Reply> {
    let u16_at = |i: usize| Some(u16::from_be_bytes([*p.get(i)?, *p.get(i + 1)?]));
    let id = u16_at(0)?;
    let flags = u16_at(2)?;
    if flags & 0x8000 == 0 {
        return None;
    }
    let (questions, answers) = (u16_at(4)?, u16_at(6)?);
    let mut at = 12;
    for _ in 0..questions {
        at = skip_name(p, at)? + 4;
    }
    let mut ips = Vec::new();
    for _ in 0..answers {
        at = skip_name(p, at)?;
        let (rtype, len) = (u16_at(at)?, usize::from(u16_at(at + 8)?));
        let data = p.get(at + 10..at + 10 + len)?;
        match (rtype, len) {
            (TYPE_A, 4) => ips.push(IpAddr::from(<[u8; 4]>::try_from(data).ok()?)),
            (TYPE_AAAA, 16) => ips.push(IpAddr::from(<[u8; 16]>::try_from(data).ok()?)),
            _ => {}
        }
        at += 10 + len;
    }
    Some(Reply {
        id,
        no_such_name: flags & 0x000f == 3,
        ips,
    })
}

/// The offset just past the name at `at` (labels, or a compression pointer).
fn skip_name(p: &[u8], mut at: usize) -> Option<usize> {
    loop {
        let len = *p.get(at)?;
        match len {
            0 => return Some(at + 1),
            l if l & 0xc0 == 0xc0 => return p.get(at + 1).map(|_| at + 2),
            l => at += 1 + usize::from(l),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_and_replies() {
        let q = query(0x1234, "a.bc", TYPE_A).unwrap();
        assert_eq!(
            q,
            [0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, b'a', 2, b'b', b'c', 0, 0, 1, 0, 1]
        );
        assert!(query(1, "a..b", TYPE_A).is_err());
        // The reply: the question, then a CNAME and an A record, both
        // named by pointers to the question's name.
        let mut r = q.clone();
        r[2] = 0x81;
        r[3] = 0x80;
        r[7] = 2;
        r.extend_from_slice(&[0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 0xc0, 12]);
        r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 0, 0, 7]);
        let reply = parse(&r).unwrap();
        assert_eq!(reply.id, 0x1234);
        assert!(!reply.no_such_name);
        assert_eq!(reply.ips, [IpAddr::from([10, 0, 0, 7])]);
        // NXDOMAIN.
        let mut nx = q.clone();
        nx[2] = 0x81;
        nx[3] = 0x83;
        assert!(parse(&nx).unwrap().no_such_name);
        // Not a reply, and every truncation of the reply: None, no panic.
        assert!(parse(&q).is_none());
        for n in 0..r.len() {
            let _ = parse(&r[..n]);
        }
        assert!(parse(&r[..r.len() - 1]).is_none());
    }
}
