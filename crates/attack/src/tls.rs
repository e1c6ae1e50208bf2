use std::{path::Path, sync::Arc};

use rustls::{
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
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
    let builder = if s.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
    } else {
        let mut roots = RootCertStore::empty();
        if s.root_certs.is_empty() {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        } else {
            for path in &s.root_certs {
                for cert in read_certs("-root-certs", path)? {
                    roots
                        .add(cert)
                        .map_err(|e| bad("-root-certs", path, format!("bad certificate: {e}")))?;
                }
            }
        }
        builder.with_root_certificates(roots)
    };
    match (&s.cert, &s.key) {
        (None, None) => Ok(builder.with_no_client_auth()),
        (None, Some(key)) => Err(bad("-key", key, "needs -cert")),
        (Some(cert), key) => {
            let chain = read_certs("-cert", cert)?;
            let key_path = key.as_deref().unwrap_or(cert);
            let key_bytes = std::fs::read(key_path).map_err(|e| unreadable("-key", key_path, e))?;
            let key = PrivateKeyDer::from_pem_slice(&key_bytes)
                .map_err(|e| bad("-key", key_path, format!("bad private key: {e:?}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| bad("-cert", cert, format!("unusable certificate/key pair: {e}")))
        }
    }
}

/// `-insecure`: accepts any server certificate (signatures still checked,
/// so the handshake itself is sound).
#[derive(Debug)]
struct NoVerify(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
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
            &self.0.signature_verification_algorithms,
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
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
