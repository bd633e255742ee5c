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
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
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

/// Splits an HTTP/1.x response into status and body (honouring Content-Length).
fn parse_response(buf: &[u8]) -> Result<(u16, String), ClientError> {
    let bad = |m: &str| ClientError::Malformed(m.to_string());
    let end = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| bad("headers are not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad(&format!("status line {status_line:?}")))?;
    let mut body = &buf[end + 4..];
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                let n: usize = v.trim().parse().map_err(|_| bad("Content-Length"))?;
                if body.len() < n {
                    return Err(bad("the body is shorter than its Content-Length"));
                }
                body = &body[..n];
            }
        }
    }
    let body = String::from_utf8(body.to_vec()).map_err(|_| bad("the body is not UTF-8"))?;
    Ok((status, body))
}
