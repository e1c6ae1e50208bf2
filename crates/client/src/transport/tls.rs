use std::{
    path::Path,
    sync::{Arc, OnceLock},
};

use rustls::{
    client::{
        danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
        Resumption, WebPkiServerVerifier,
    },
    crypto::{ring, CryptoProvider},
    pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer, ServerName, UnixTime},
    ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use thiserror::Error;

use crate::ClientConfig as Settings;

/// A TLS setting that cannot be used; names the file.
#[derive(Debug, Error)]
pub enum TlsError {
    /// A certificate or key file is unreadable or not PEM.
    #[error("{flag} {path}: {what}")]
    BadFile {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: String,
        /// What was wrong.
        what: String,
    },
    /// A certificate or key file cannot be read.
    #[error("{flag} {path}: {error}")]
    Unreadable {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(String),
}

impl TlsError {
    /// Whether the tool's own I/O failed (exit 1) rather than the input
    /// being bad (exit 2).
    pub fn is_io(&self) -> bool {
        matches!(self, TlsError::Unreadable { .. })
    }
}

fn unreadable(flag: &'static str, path: &Path, error: std::io::Error) -> TlsError {
    TlsError::Unreadable {
        flag,
        path: path.display().to_string(),
        error,
    }
}

fn bad(flag: &'static str, path: &Path, what: impl ToString) -> TlsError {
    TlsError::BadFile {
        flag,
        path: path.display().to_string(),
        what: what.to_string(),
    }
}

fn read_certs(flag: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let bytes = std::fs::read(path).map_err(|e| unreadable(flag, path, e))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(flag, path, format!("bad certificate: {e:?}")))?;
    if certs.is_empty() {
        return Err(bad(flag, path, "bad certificate: no PEM certificate found"));
    }
    Ok(certs)
}

/// Builds the rustls client configuration from the TLS flags (ALPN is left
/// empty: the connector sets it from `-http2`).
pub(crate) fn client_config(s: &Settings) -> Result<ClientConfig, TlsError> {
    let provider = Arc::new(ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = if s.insecure || s.root_certs.is_empty() {
        let trust = if s.insecure {
            Trust::Any
        } else {
            Trust::System(OnceLock::new())
        };
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier { provider, trust }))
    } else {
        let mut roots = RootCertStore::empty();
        for path in &s.root_certs {
            for cert in read_certs("-root-certs", path)? {
                roots
                    .add(cert)
                    .map_err(|e| bad("-root-certs", path, format!("bad certificate: {e}")))?;
            }
        }
        builder.with_root_certificates(roots)
    };
    let mut config = match (&s.cert, &s.key) {
        (None, None) => builder.with_no_client_auth(),
        (None, Some(key)) => return Err(bad("-key", key, "needs -cert")),
        (Some(cert), key) => {
            let chain = read_certs("-cert", cert)?;
            let key_path = key.as_deref().unwrap_or(cert);
            let key_bytes = std::fs::read(key_path).map_err(|e| unreadable("-key", key_path, e))?;
            let key = PrivateKeyDer::from_pem_slice(&key_bytes)
                .map_err(|e| bad("-key", key_path, format!("bad private key: {e:?}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| bad("-cert", cert, format!("unusable certificate/key pair: {e}")))?
        }
    };
    // rustls resumes sessions unless told not to; vegeta (Go) does only
    // with -session-tickets. Resumed handshakes are cheaper for the server,
    // so an attack that resumed by default would measure something else.
    config.resumption = if s.session_tickets {
        Resumption::default()
    } else {
        Resumption::disabled()
    };
    Ok(config)
}

/// Checks server certificates without `-root-certs`: against the system's
/// roots, or not at all with `-insecure` (signatures are checked either
/// way, so the handshake itself is sound).
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    trust: Trust,
}

#[derive(Debug)]
enum Trust {
    /// `-insecure`: any certificate.
    Any,
    /// The system's root certificates, read at the first handshake: an
    /// attack on plain http:// targets never reads them (4-5 ms and 0.4
    /// MiB at start-up). None: none could be read, and no certificate is
    /// trusted.
    System(OnceLock<Option<Arc<WebPkiServerVerifier>>>),
}

impl Verifier {
    /// Whether the system's roots have been read (tests).
    #[cfg(test)]
    fn system_roots_read(&self) -> bool {
        matches!(&self.trust, Trust::System(roots) if roots.get().is_some())
    }
}

fn system_roots(provider: &Arc<CryptoProvider>) -> Option<Arc<WebPkiServerVerifier>> {
    let mut roots = RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .ok()
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let roots = match &self.trust {
            Trust::Any => return Ok(ServerCertVerified::assertion()),
            Trust::System(roots) => roots.get_or_init(|| system_roots(&self.provider)),
        };
        match roots {
            Some(v) => {
                v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            }
            None => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_roots_are_read_at_the_first_certificate_check() {
        let v = Verifier {
            provider: Arc::new(ring::default_provider()),
            trust: Trust::System(OnceLock::new()),
        };
        assert!(!v.system_roots_read(), "read before any handshake");
        // A self-signed certificate: no system root vouches for it.
        let cert = barrage_testkit::TestCert::generate();
        let der = CertificateDer::from_pem_slice(cert.cert_pem.as_bytes()).expect("own cert");
        let name = ServerName::try_from("localhost").expect("name");
        let r = v.verify_server_cert(&der, &[], &name, &[], UnixTime::now());
        assert!(
            matches!(
                r,
                Err(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer
                ))
            ),
            "{r:?}"
        );
        assert!(v.system_roots_read(), "read at the first check");
    }
}

/// A failed TLS handshake with `host`, worded as Go's `crypto/tls` and
/// `crypto/x509` word it (`tls: failed to verify certificate: x509:
/// certificate signed by unknown authority`), never as a Debug dump.
pub fn handshake_failure(e: &std::io::Error, host: &str) -> String {
    use rustls::{CertificateError as C, Error as E};
    let Some(inner) = e.get_ref() else {
        return format!("tls: {}", crate::transport::dial::go_error(e));
    };
    let Some(err) = inner.downcast_ref::<E>() else {
        // Ours (crate::sniff), or the socket's.
        return match inner.to_string() {
            t if t.starts_with("http") => t,
            t => format!("tls: {t}"),
        };
    };
    let x509 = |what: String| format!("tls: failed to verify certificate: x509: {what}");
    match err {
        E::InvalidCertificate(c) => x509(match c {
            C::UnknownIssuer => "certificate signed by unknown authority".into(),
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => "certificate has expired or is not yet valid".into(),
            C::NotValidForNameContext { presented, .. } if !presented.is_empty() => {
                format!(
                    "certificate is valid for {}, not {host}",
                    presented.join(", ")
                )
            }
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                format!("certificate is not valid for {host}")
            }
            C::BadSignature => "certificate signature is invalid".into(),
            C::Revoked => "certificate is revoked".into(),
            C::Other(other) => words(&other.to_string()),
            c => words(&format!("{c:?}")),
        }),
        E::AlertReceived(alert) => format!("remote error: tls: {}", words(&format!("{alert:?}"))),
        E::InvalidMessage(rustls::InvalidMessage::InvalidContentType) => {
            "tls: first record does not look like a TLS handshake".into()
        }
        E::InvalidMessage(m) => format!(
            "tls: malformed message from the server ({})",
            words(&format!("{m:?}"))
        ),
        other => format!("tls: {other}"),
    }
}

/// A certificate's failure as QUIC reports it (rustls's words, the error
/// itself gone by then), as Go words it.
pub(crate) fn certificate_words(what: &str, host: &str) -> String {
    if what.contains("UnknownIssuer") || what.contains("unknown issuer") {
        "certificate signed by unknown authority".into()
    } else if what.contains("Expired") || what.contains("NotValidYet") || what.contains("expired") {
        "certificate has expired or is not yet valid".into()
    } else if let Some((_, names)) = what.split_once("is only valid for ") {
        // rustls names them as `DnsName("a.example")`: the name alone.
        let names: Vec<&str> = names
            .split(", ")
            .flat_map(|n| n.split(" or "))
            .map(|n| match (n.find('"'), n.rfind('"')) {
                (Some(a), Some(b)) if b > a => &n[a + 1..b],
                _ => n,
            })
            .collect();
        format!("certificate is valid for {}, not {host}", names.join(", "))
    } else if what.contains("NotValidForName") || what.contains("not valid for name") {
        format!("certificate is not valid for {host}")
    } else {
        words(what)
    }
}

/// A CamelCase name as lower-case words: `CaUsedAsEndEntity` -> `ca used
/// as end entity`. What rustls and webpki name only in their Debug form.
fn words(name: &str) -> String {
    // A Debug wrapping (`Other(OtherError(CaUsedAsEndEntity))`, as QUIC's
    // close reason carries it): the innermost name alone.
    let name = name
        .rsplit('(')
        .next()
        .unwrap_or(name)
        .trim_end_matches(')')
        .trim();
    let mut out = String::with_capacity(name.len() + 8);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with(' ') {
            out.push(' ');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod wording_tests {
    use super::*;

    fn io(e: rustls::Error) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }

    #[test]
    fn handshake_failures_read_as_go_words_them() {
        use rustls::{CertificateError as C, Error as E};
        for (e, want) in [
            (
                E::InvalidCertificate(C::UnknownIssuer),
                "tls: failed to verify certificate: x509: certificate signed by unknown authority",
            ),
            (
                E::InvalidCertificate(C::Expired),
                "tls: failed to verify certificate: x509: certificate has expired or is not yet valid",
            ),
            (
                E::InvalidCertificate(C::NotValidForName),
                "tls: failed to verify certificate: x509: certificate is not valid for a.test",
            ),
            (
                E::AlertReceived(rustls::AlertDescription::HandshakeFailure),
                "remote error: tls: handshake failure",
            ),
            (
                E::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
                "tls: first record does not look like a TLS handshake",
            ),
        ] {
            assert_eq!(handshake_failure(&io(e), "a.test"), want);
        }
        let other = rustls::OtherError(std::sync::Arc::new(std::io::Error::other(
            "CaUsedAsEndEntity",
        )));
        let text = handshake_failure(&io(E::InvalidCertificate(C::Other(other))), "a.test");
        assert_eq!(
            text,
            "tls: failed to verify certificate: x509: ca used as end entity"
        );
        assert!(!text.contains('('), "{text}");
        // QUIC's close reason keeps only rustls's Debug text.
        assert_eq!(
            certificate_words(
                "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
                "a.test"
            ),
            "ca used as end entity"
        );
    }
}
