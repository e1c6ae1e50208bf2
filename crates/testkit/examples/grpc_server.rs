//! The test server's gRPC side as a process, for `scripts/bench`'s gRPC
//! cells: h2c on a loopback port (printed as a URL on the first line of
//! stdout), `test.echo.Echo` methods echo their message. Runs until its
//! stdin closes.

fn main() {
    let server = barrage_testkit::Server::http();
    println!("{}", server.url(""));
    let mut sink = String::new();
    while std::io::stdin().read_line(&mut sink).is_ok_and(|n| n > 0) {
        sink.clear();
    }
}
