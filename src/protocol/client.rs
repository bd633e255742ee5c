//! The game manager's side of one protocol exchange: a POST over HTTP/1.0, one
//! request per connection, as the reference manager (ggp-base) sends it, with a
//! deadline on the whole exchange. Used by the arena's HTTP players and by tests.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// A completed exchange.
#[derive(Clone, Debug)]
pub struct Exchange {
    pub status: u16,
    pub body: String,
    /// From connecting to the last byte of the reply.
    pub took: Duration,
}

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("bad player address '{0}': expected http://HOST:PORT")]
    Address(String),
    #[error("no reply within {0:.3}s")]
    Timeout(f64),
    #[error("connection to {addr}: {err}")]
    Io { addr: String, err: std::io::Error },
    #[error("malformed HTTP reply: {0}")]
    Malformed(String),
}

/// A player's address, from `http://HOST:PORT[/]` or `HOST:PORT`.
pub fn resolve(url: &str) -> Result<(SocketAddr, String), ClientError> {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let hostport = rest.split('/').next().unwrap_or("");
    if hostport.is_empty() || !hostport.contains(':') {
        return Err(ClientError::Address(url.to_string()));
    }
    let addr = hostport
        .to_socket_addrs()
        .map_err(|_| ClientError::Address(url.to_string()))?
        .next()
        .ok_or_else(|| ClientError::Address(url.to_string()))?;
    Ok((addr, hostport.to_string()))
}

/// Sends raw request bytes and reads the reply until the server closes, within
/// `timeout` in all.
pub fn exchange_raw(url: &str, request: &[u8], timeout: Duration) -> Result<Exchange, ClientError> {
    let (addr, _) = resolve(url)?;
    let t0 = Instant::now();
    let io = |err| ClientError::Io {
        addr: addr.to_string(),
        err,
    };
    let left = |t0: Instant| -> Result<Duration, ClientError> {
        timeout
            .checked_sub(t0.elapsed())
            .filter(|d| !d.is_zero())
            .ok_or(ClientError::Timeout(timeout.as_secs_f64()))
    };
    let mut s = TcpStream::connect_timeout(&addr, left(t0)?).map_err(io)?;
    s.set_nodelay(true).map_err(io)?;
    s.set_write_timeout(Some(left(t0)?)).map_err(io)?;
    // A server that refuses a large body may answer before reading all of it; the
    // reply is still worth reading, so a failed write is reported only if no
    // reply follows.
    let written = s.write_all(request);
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        s.set_read_timeout(Some(left(t0)?)).map_err(io)?;
        match s.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                // A player that keeps the connection open after its whole
                // reply is done: stop at the end of the body.
                if complete(&buf) {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(ClientError::Timeout(timeout.as_secs_f64()))
            }
            Err(e) if buf.is_empty() => return Err(io(written.err().unwrap_or(e))),
            Err(_) => break,
        }
    }
    if buf.is_empty() {
        if let Err(e) = written {
            return Err(io(e));
        }
    }
    let took = t0.elapsed();
    let (status, body) = parse_response(&buf)?;
    Ok(Exchange { status, body, took })
}

/// POSTs one protocol message as ggp-base does and returns the reply.
pub fn post(url: &str, message: &str, timeout: Duration) -> Result<Exchange, ClientError> {
    let (_, hostport) = resolve(url)?;
    let req = format!(
        "POST / HTTP/1.0\r\nHost: {hostport}\r\nContent-Type: text/acl\r\nAccept: text/delim\r\nSender: GAMESERVER\r\nReceiver: {hostport}\r\nContent-Length: {}\r\n\r\n{message}",
        message.len()
    );
    exchange_raw(url, req.as_bytes(), timeout)
}

/// Where the headers end and the body starts: after the first empty line.
/// Header lines end with CRLF as HTTP says, or with a bare LF as players
/// built on ggp-base (most GGP players, Sancho among them) send them.
fn split_head(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while let Some(nl) = buf[i..].iter().position(|&b| b == b'\n') {
        let after = i + nl + 1;
        match &buf[after..] {
            [b'\n', ..] => return Some((i + nl, after + 1)),
            [b'\r', b'\n', ..] => return Some((i + nl, after + 2)),
            _ => i = after,
        }
    }
    None
}

/// The header lines of `head`, without their line ends.
fn header_lines(head: &str) -> impl Iterator<Item = &str> {
    head.split('\n').map(|l| l.trim_end_matches('\r'))
}

/// The Content-Length header's value, if there is one and it is a number.
fn content_length(head: &str) -> Option<Result<usize, ()>> {
    header_lines(head).skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| v.trim().parse().map_err(|_| ()))
    })
}

/// Whether `buf` holds a whole reply by its Content-Length.
fn complete(buf: &[u8]) -> bool {
    let Some((end, body)) = split_head(buf) else {
        return false;
    };
    let Ok(head) = std::str::from_utf8(&buf[..end]) else {
        return false;
    };
    matches!(content_length(head), Some(Ok(n)) if buf.len() - body >= n)
}

/// Splits an HTTP/1.x response into status and body (honouring Content-Length).
fn parse_response(buf: &[u8]) -> Result<(u16, String), ClientError> {
    let bad = |m: &str| ClientError::Malformed(m.to_string());
    let (end, start) = split_head(buf).ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| bad("headers are not UTF-8"))?;
    let status_line = header_lines(head).next().unwrap_or("");
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(&format!("status line {status_line:?}")))?;
    let mut body = &buf[start..];
    if let Some(n) = content_length(head) {
        let n = n.map_err(|_| bad("Content-Length"))?;
        if body.len() < n {
            return Err(bad("the body is shorter than its Content-Length"));
        }
        body = &body[..n];
    }
    let body = String::from_utf8(body.to_vec()).map_err(|_| bad("the body is not UTF-8"))?;
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replies as HTTP writes them and as ggp-base's players write them
    /// (bare LF line ends), with and without a Content-Length.
    #[test]
    fn replies_with_either_line_end_parse() {
        let crlf = b"HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: 5\r\n\r\nreadyXX";
        assert_eq!(parse_response(crlf).unwrap(), (200, "ready".into()));
        let lf = b"HTTP/1.0 200 OK\nContent-type: text/acl\nContent-length: 5\nAccess-Control-Allow-Origin: *\n\nready";
        assert_eq!(parse_response(lf).unwrap(), (200, "ready".into()));
        assert!(complete(lf) && !complete(&lf[..lf.len() - 1]));
        let no_length = b"HTTP/1.0 200 OK\n\n( mark 1 1 )";
        assert_eq!(
            parse_response(no_length).unwrap(),
            (200, "( mark 1 1 )".into())
        );
        assert!(!complete(no_length));
        let mixed = b"HTTP/1.0 400 Bad\r\nContent-Length: 2\n\r\nno";
        assert_eq!(parse_response(mixed).unwrap(), (400, "no".into()));
        for bad in [
            &b"HTTP/1.0 200 OK\r\nContent-Length: 9\r\n"[..],
            b"junk\n\nx",
            b"HTTP/1.0 200 OK\nContent-Length: 9\n\nshort",
        ] {
            assert!(matches!(
                parse_response(bad),
                Err(ClientError::Malformed(_))
            ));
        }
    }

    /// A player written as ggp-base's are: bare LF line ends, and the
    /// connection left open after the reply. The exchange ends at the end
    /// of the body, well inside its timeout.
    #[test]
    fn a_ggp_base_style_player_is_heard() {
        use std::io::{BufRead, BufReader};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let player = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut line = String::new();
            let mut length = 0;
            while r.read_line(&mut line).unwrap() > 0 && line.trim() != "" {
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                line.clear();
            }
            let mut body = vec![0; length];
            r.read_exact(&mut body).unwrap();
            assert_eq!(body, b"(INFO)");
            s.write_all(b"HTTP/1.0 200 OK\nContent-type: text/acl\nContent-length: 9\n\navailable")
                .unwrap();
            // Held open until the manager closes its side.
            let _ = r.read(&mut [0u8; 1]);
        });
        let reply = post(&url, "(INFO)", Duration::from_secs(60)).unwrap();
        assert_eq!((reply.status, reply.body.as_str()), (200, "available"));
        player.join().unwrap();
    }
}
