//! The bytes under a chain endpoint's websocket: plain TCP for `ws://`, TLS for `wss://` by the
//! rustls (ring) the workspace already builds, trusting the webpki roots.
//!
//! Why not tungstenite's own TLS features: they bring a second `webpki-roots` (0.26, a shim
//! over 1.0) into the workspace; the plain handshake over this stream needs neither.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use crate::describe::quote;
use crate::error::{Error, Result};

/// A connected socket, with TLS or without.
pub(super) enum WsStream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl WsStream {
    /// `tcp` as is (`tls` false), or with a TLS client session for `host` over it: the
    /// handshake itself runs with the first reads and writes (the websocket's handshake).
    pub(super) fn new(tcp: TcpStream, tls: bool, host: &str) -> Result<WsStream> {
        if !tls {
            return Ok(WsStream::Plain(tcp));
        }
        let name = ServerName::try_from(host.to_owned()).map_err(|e| {
            Error::configuration(format!("not a TLS server name: {} ({e})", quote(host)))
        })?;
        let session = ClientConnection::new(Arc::clone(tls_config()?), name)
            .map_err(|e| Error::configuration(format!("TLS for {}: {e}", quote(host))))?;
        Ok(WsStream::Tls(Box::new(StreamOwned::new(session, tcp))))
    }
}

/// One client configuration per process: ring, the safe protocol versions, the webpki roots.
fn tls_config() -> Result<&'static Arc<ClientConfig>> {
    static CONFIG: OnceLock<std::result::Result<Arc<ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
            ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map(|builder| {
                    Arc::new(builder.with_root_certificates(roots).with_no_client_auth())
                })
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|why| Error::configuration(format!("TLS cannot be set up: {why}")))
}

impl Read for WsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            WsStream::Plain(tcp) => tcp.read(buf),
            WsStream::Tls(tls) => tls.read(buf),
        }
    }
}

impl Write for WsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            WsStream::Plain(tcp) => tcp.write(buf),
            WsStream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            WsStream::Plain(tcp) => tcp.flush(),
            WsStream::Tls(tls) => tls.flush(),
        }
    }
}
