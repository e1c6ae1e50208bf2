//! The test WebSocket server as a process, for `scripts/bench`'s held
//! WebSocket connections cell: ws:// on a loopback port (the base URL on
//! the first line of stdout; `/echo` echoes), its open-files limit raised
//! to the hard limit. Each line read from stdin prints the connections
//! open now and in all and the messages received; it runs until stdin
//! closes.

fn main() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid rlimit struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
    let server = barrage_testkit::WsServer::start();
    println!("{}", server.url(""));
    let mut line = String::new();
    loop {
        line.clear();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => println!(
                "open {} opened {} messages {}",
                server.open(),
                server.opened(),
                server.messages()
            ),
        }
    }
}
