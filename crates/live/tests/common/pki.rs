//! Certificates for the TLS tests, made with rcgen (no system tool needed).

use std::path::{Path, PathBuf};
use tandem_live::controller::TlsFiles;
use tandem_testkit::Scratch;

/// A CA, a controller certificate for localhost / 127.0.0.1 and a switch certificate, as PEM
/// files in a scratch folder; `other_ca` signs a second switch certificate the controller must
/// refuse.
pub struct Pki {
    pub dir: Scratch,
}

impl Pki {
    pub fn new(label: &str) -> Pki {
        let dir = Scratch::new(label);
        let ca = Authority::new("tandem test CA");
        let other = Authority::new("some other CA");
        write(dir.path(), "ca", &ca.cert.pem(), &ca.key.serialize_pem());
        ca.issue(dir.path(), "controller", &["localhost", "127.0.0.1"]);
        ca.issue(dir.path(), "switch", &["switch.example"]);
        other.issue(dir.path(), "intruder", &["intruder.example"]);
        Pki { dir }
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The controller's TLS settings.
    pub fn controller_files(&self) -> TlsFiles {
        TlsFiles {
            cert: self.file("controller-cert.pem"),
            key: self.file("controller-key.pem"),
            ca: self.file("ca-cert.pem"),
        }
    }
}

struct Authority {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

impl Authority {
    fn new(name: &str) -> Authority {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        Authority {
            cert: p.self_signed(&key).unwrap(),
            key,
        }
    }

    fn issue(&self, dir: &Path, name: &str, names: &[&str]) {
        let key = rcgen::KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut p = rcgen::CertificateParams::new(names).unwrap();
        p.distinguished_name.push(rcgen::DnType::CommonName, name);
        let cert = p.signed_by(&key, &self.cert, &self.key).unwrap();
        write(dir, name, &cert.pem(), &key.serialize_pem());
    }
}

fn write(dir: &Path, name: &str, cert: &str, key: &str) {
    std::fs::write(dir.join(format!("{name}-cert.pem")), cert).unwrap();
    std::fs::write(dir.join(format!("{name}-key.pem")), key).unwrap();
}
