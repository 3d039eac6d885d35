//! TLS for switch connections: the controller proves itself with a certificate and accepts
//! only switches that present a certificate signed by a given CA (OpenFlow's `ssl:` targets,
//! e.g. `ovs-vsctl set-ssl KEY CERT CACERT` and `set-controller BR ssl:HOST:6653` in Open
//! vSwitch). rustls with the ring provider; TLS 1.2 and 1.3.

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The PEM files of a TLS controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The controller's certificate chain (PEM), leaf first.
    pub cert: PathBuf,
    /// The controller's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
    /// The CA certificate(s) (PEM) that must have signed every switch's certificate.
    pub ca: PathBuf,
}

/// Why the TLS settings could not be used: names the file.
#[derive(Debug)]
pub struct TlsError {
    /// The file at fault, if one is.
    pub file: Option<PathBuf>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}: {}", p.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for TlsError {}

fn err(file: &Path, message: impl Into<String>) -> TlsError {
    TlsError {
        file: Some(file.to_path_buf()),
        message: message.into(),
    }
}

fn certs(file: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs = CertificateDer::pem_file_iter(file)
        .map_err(|e| err(file, format!("cannot read {what}: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(file, format!("not a PEM {what}: {e}")))?;
    if certs.is_empty() {
        return Err(err(file, format!("no certificate in it (expected a PEM {what})")));
    }
    Ok(certs)
}

/// Reads the files and builds the server side: our certificate and key, and a verifier that
/// requires every client to present a certificate chaining to the CA.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certs(&files.cert, "certificate")?;
    let key =
        PrivateKeyDer::from_pem_file(&files.key).map_err(|e| err(&files.key, format!("not a PEM private key: {e}")))?;
    let mut roots = RootCertStore::empty();
    for c in certs(&files.ca, "CA certificate")? {
        roots
            .add(c)
            .map_err(|e| err(&files.ca, format!("unusable CA certificate: {e}")))?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| err(&files.ca, format!("unusable CA certificate: {e}")))?;
    let cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError {
            file: None,
            message: format!("TLS: {e}"),
        })?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .map_err(|e| err(&files.key, format!("does not go with {}: {e}", files.cert.display())))?;
    Ok(Arc::new(cfg))
}
