use std::{
    fs,
    net::{SocketAddr, TcpListener, TcpStream},
    time::Duration,
};

use socket2::{Domain, Socket, Type};

/// A loopback port whose accept queue is full and never drained: the
/// kernel drops every further SYN, so a connection attempt to it hangs in
/// SYN-SENT (retrying) until the client gives up. Stands in for a server
/// that does not answer at the TCP level.
pub struct Blackhole {
    addr: SocketAddr,
    _listener: TcpListener,
    _queued: Vec<TcpStream>,
}

impl Blackhole {
    /// Opens the port and fills its queue (a listen backlog of 0 holds one
    /// connection).
    pub fn start() -> Self {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("socket");
        let any: SocketAddr = "127.0.0.1:0".parse().expect("loopback address");
        socket.bind(&any.into()).expect("bind loopback port 0");
        socket.listen(0).expect("listen");
        let listener: TcpListener = socket.into();
        let addr = listener.local_addr().expect("local addr");
        let mut queued = Vec::new();
        // Connect until an attempt hangs: then the queue is full.
        for _ in 0..8 {
            match TcpStream::connect_timeout(&addr, Duration::from_millis(300)) {
                Ok(s) => queued.push(s),
                Err(_) => break,
            }
        }
        Blackhole {
            addr,
            _listener: listener,
            _queued: queued,
        }
    }

    /// `http://127.0.0.1:port` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Connection attempts to this port now waiting for an answer (sockets
    /// in SYN-SENT, from /proc/net/tcp).
    pub fn attempts(&self) -> usize {
        let Ok(table) = fs::read_to_string("/proc/net/tcp") else {
            return 0;
        };
        let remote = format!("0100007F:{:04X}", self.addr.port());
        table
            .lines()
            .skip(1)
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[2] == remote && f[3] == "02"
            })
            .count()
    }
}
