use std::{path::PathBuf, sync::Arc};

use rustls::{
    crypto::ring,
    pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer},
    ServerConfig,
};

/// A self-signed certificate for `localhost` and `127.0.0.1`, generated at
/// test time, with its PEM files written to a temporary directory.
pub struct TestCert {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
    /// Where the certificate PEM was written (use as `-root-certs`).
    pub cert_path: PathBuf,
    /// Where the key PEM was written.
    pub key_path: PathBuf,
}

impl TestCert {
    /// Generates a fresh certificate and writes both PEM files.
    pub fn generate() -> Self {
        let ck = rcgen::generate_simple_self_signed(vec![
            "localhost".to_string(),
            "127.0.0.1".to_string(),
        ])
        .expect("rcgen generates a self-signed certificate");
        let cert_pem = ck.cert.pem();
        let key_pem = ck.key_pair.serialize_pem();
        let dir = std::env::temp_dir().join(format!(
            "barrage-testkit-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let cert_path = dir.join("cert.pem");
        let key_path = dir.join("key.pem");
        std::fs::write(&cert_path, &cert_pem).expect("write cert");
        std::fs::write(&key_path, &key_pem).expect("write key");
        TestCert {
            cert_pem,
            key_pem,
            cert_path,
            key_path,
        }
    }

    /// A rustls server configuration offering h2 and HTTP/1.1.
    pub fn server_config(&self) -> Arc<ServerConfig> {
        let certs = CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("parse own cert");
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).expect("parse own key");
        let mut cfg = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server cert");
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Arc::new(cfg)
    }
}

impl Drop for TestCert {
    fn drop(&mut self) {
        if let Some(dir) = self.cert_path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
