use std::{
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
};

use rustls::{
    crypto::ring,
    pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer},
    ServerConfig,
};

/// A test certificate generated at test time (self-signed, expired, for a
/// wrong name, or signed by a fresh CA), with its PEM files written to a
/// temporary directory that is removed on drop.
pub struct TestCert {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
    /// Where the certificate PEM was written (use as `-root-certs` for a
    /// self-signed one).
    pub cert_path: PathBuf,
    /// Where the key PEM was written.
    pub key_path: PathBuf,
    ca_path: Option<PathBuf>,
}

/// Names every test certificate is valid for (unless made wrong on purpose).
fn loopback_names() -> Vec<String> {
    vec!["localhost".to_string(), "127.0.0.1".to_string()]
}

impl TestCert {
    /// A fresh self-signed certificate for localhost and 127.0.0.1.
    pub fn generate() -> Self {
        let ck = rcgen::generate_simple_self_signed(loopback_names())
            .expect("rcgen generates a self-signed certificate");
        Self::write(ck.cert.pem(), ck.key_pair.serialize_pem(), None)
    }

    /// A self-signed certificate that expired in 2001.
    pub fn expired() -> Self {
        let mut params = rcgen::CertificateParams::new(loopback_names()).expect("params");
        params.not_before = rcgen::date_time_ymd(2000, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 1, 1);
        let key = rcgen::KeyPair::generate().expect("key");
        let cert = params.self_signed(&key).expect("cert");
        Self::write(cert.pem(), key.serialize_pem(), None)
    }

    /// A CA-signed certificate for another name than the server's
    /// (`example.invalid`); [`TestCert::ca_path`] is the CA to trust.
    pub fn wrong_name() -> Self {
        Self::signed_for(vec!["example.invalid".to_string()])
    }

    /// A certificate for localhost and 127.0.0.1 signed by a fresh CA;
    /// [`TestCert::ca_path`] is the CA to trust.
    pub fn ca_signed() -> Self {
        Self::signed_for(loopback_names())
    }

    fn signed_for(names: Vec<String>) -> Self {
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("ca params");
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "barrage test CA");
        let ca_key = rcgen::KeyPair::generate().expect("ca key");
        let ca = ca_params.self_signed(&ca_key).expect("ca cert");
        let leaf_key = rcgen::KeyPair::generate().expect("leaf key");
        let leaf = rcgen::CertificateParams::new(names)
            .expect("leaf params")
            .signed_by(&leaf_key, &ca, &ca_key)
            .expect("leaf cert");
        Self::write(leaf.pem(), leaf_key.serialize_pem(), Some(ca.pem()))
    }

    /// The CA certificate's PEM file, for CA-signed certificates.
    pub fn ca_path(&self) -> Option<PathBuf> {
        self.ca_path.clone()
    }

    fn write(cert_pem: String, key_pem: String, ca_pem: Option<String>) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "barrage-testkit-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let cert_path = dir.join("cert.pem");
        let key_path = dir.join("key.pem");
        std::fs::write(&cert_path, &cert_pem).expect("write cert");
        std::fs::write(&key_path, &key_pem).expect("write key");
        let ca_path = ca_pem.map(|pem| {
            let p = dir.join("ca.pem");
            std::fs::write(&p, pem).expect("write ca");
            p
        });
        TestCert {
            cert_pem,
            key_pem,
            cert_path,
            key_path,
            ca_path,
        }
    }

    /// A rustls server configuration offering h2 and HTTP/1.1.
    pub fn server_config(&self) -> Arc<ServerConfig> {
        let mut cfg = self.rustls_config();
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Arc::new(cfg)
    }

    /// A rustls server configuration for QUIC: TLS 1.3, ALPN h3, 0-RTT
    /// accepted.
    pub fn quic_server_config(&self) -> ServerConfig {
        let mut cfg = self.rustls_config();
        cfg.alpn_protocols = vec![b"h3".to_vec()];
        cfg.max_early_data_size = u32::MAX;
        cfg
    }

    fn rustls_config(&self) -> ServerConfig {
        let certs = CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("parse own cert");
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).expect("parse own key");
        ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .expect("server cert")
    }
}

impl Drop for TestCert {
    fn drop(&mut self) {
        if let Some(dir) = self.cert_path.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
