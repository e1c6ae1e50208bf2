//! The test server's HTTP/3 side as a process, for `scripts/bench`'s
//! HTTP/3 cells: quinn + h3 on a loopback UDP port (its `https://` URL on
//! the first line of stdout), and the same routes over HTTP/2 with TLS
//! from the same certificate (the second line), to compare the two
//! protocols against one server's code. Runs until its stdin closes.

fn main() {
    let cert = barrage_testkit::TestCert::generate();
    let h3 = barrage_testkit::H3Server::start(&cert);
    let h2 = barrage_testkit::Server::https(&cert);
    println!("{}", h3.url(""));
    println!("{}", h2.url(""));
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
        sink.clear();
    }
}
