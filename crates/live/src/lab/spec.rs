//! A lab file (`labs/*.toml`): Axons, hosts and links.
//!
//! ```toml
//! prefix = "tlr"      # namespaces tlr-a1.., tlr-h1..; at most 6 characters of [a-z0-9]
//! axons = 3
//! [[hosts]]
//! axon = 1            # the host hangs off Axon 1 ...
//! port = 0            # ... on its port 0
//! [[links]]
//! a = "1.2"           # Axon 1 port 2 <-> Axon 2 port 2
//! b = "2.2"
//! ```

use serde::Deserialize;
use std::path::Path;

/// One lab.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabSpec {
    /// Prefix of every name the lab creates.
    pub prefix: String,
    /// Number of Axons (ids 1..=axons).
    pub axons: u64,
    /// Axons discover the topology and failures with probes (default: only the file's topology
    /// and their own links' states).
    #[serde(default)]
    pub discovery: bool,
    /// Hosts, numbered 1.. in order.
    pub hosts: Vec<HostSpec>,
    /// Links between Axons.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
}

/// A host and where it is plugged in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Its Axon.
    pub axon: u64,
    /// The Axon's port.
    pub port: u8,
}

/// A link between two Axon ports, `"AXON.PORT"` each.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One end.
    pub a: String,
    /// The other end.
    pub b: String,
}

/// An Axon port.
pub type End = (u64, u8);

fn parse_end(s: &str) -> Result<End, String> {
    let (a, p) = s
        .split_once('.')
        .ok_or_else(|| format!("link end {s:?}: expected AXON.PORT"))?;
    Ok((
        a.parse().map_err(|_| format!("link end {s:?}: bad axon"))?,
        p.parse().map_err(|_| format!("link end {s:?}: bad port"))?,
    ))
}

impl LabSpec {
    /// Reads and checks a lab file; errors name the file, the line and the key.
    pub fn load(path: &Path) -> Result<LabSpec, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        LabSpec::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses and checks a lab text.
    pub fn parse(text: &str) -> Result<LabSpec, String> {
        let spec: LabSpec = toml::from_str(text).map_err(|e| crate::toml_error::describe(text, &e))?;
        spec.check()?;
        Ok(spec)
    }

    fn check(&self) -> Result<(), String> {
        super::app_lab::check_prefix(&self.prefix)?;
        if self.axons == 0 || self.axons > 250 {
            return Err("key `axons`: 1 to 250".into());
        }
        let mut used = std::collections::BTreeSet::new();
        for h in &self.hosts {
            self.end_ok((h.axon, h.port), "hosts")?;
            if !used.insert((h.axon, h.port)) {
                return Err(format!("key `hosts`: port {}.{} used twice", h.axon, h.port));
            }
        }
        for l in self.links()? {
            for e in [l.0, l.1] {
                self.end_ok(e, "links")?;
                if !used.insert(e) {
                    return Err(format!("key `links`: port {}.{} used twice", e.0, e.1));
                }
            }
        }
        Ok(())
    }

    fn end_ok(&self, (a, p): End, key: &str) -> Result<(), String> {
        if a == 0 || a > self.axons {
            return Err(format!("key `{key}`: axon {a} is not in 1..={}", self.axons));
        }
        if usize::from(p) >= tandem_axon::MAX_PORTS {
            return Err(format!("key `{key}`: port {p} is not in 0..{}", tandem_axon::MAX_PORTS));
        }
        Ok(())
    }

    /// The links as pairs of ends.
    pub fn links(&self) -> Result<Vec<(End, End)>, String> {
        self.links
            .iter()
            .map(|l| Ok((parse_end(&l.a)?, parse_end(&l.b)?)))
            .collect()
    }

    /// Namespace of Axon `a`.
    pub fn axon_ns(&self, a: u64) -> String {
        format!("{}-a{a}", self.prefix)
    }

    /// Namespace of host `h` (1-based).
    pub fn host_ns(&self, h: usize) -> String {
        format!("{}-h{h}", self.prefix)
    }

    /// Every namespace the lab creates.
    pub fn namespaces(&self) -> Vec<String> {
        let mut v: Vec<String> = (1..=self.axons).map(|a| self.axon_ns(a)).collect();
        v.extend((1..=self.hosts.len()).map(|h| self.host_ns(h)));
        v
    }

    /// The topology text the control planes get (pools 10.0.A.10-10.0.A.200).
    pub fn topology_text(&self) -> Result<String, String> {
        let mut s = String::new();
        for a in 1..=self.axons {
            s += &format!("axon {a} 10.0.{a}.10 10.0.{a}.200\n");
        }
        for ((a, p), (b, q)) in self.links()? {
            s += &format!("link {a}.{p} {b}.{q}\n");
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_labs_parse() {
        for f in ["line.toml", "ring.toml"] {
            let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../labs").join(f);
            let s = LabSpec::load(&p).unwrap();
            assert_eq!((s.axons, s.hosts.len()), (3, 6), "{f}");
        }
    }

    #[test]
    fn bad_labs_name_the_key() {
        let e = LabSpec::parse("prefix = \"TOO-LONG-1\"\naxons = 1\nhosts = []").unwrap_err();
        assert!(e.contains("prefix"), "{e}");
        let e = LabSpec::parse("prefix = \"t\"\naxons = 1\n[[hosts]]\naxon = 2\nport = 0").unwrap_err();
        assert!(e.contains("axon 2"), "{e}");
        let e = LabSpec::parse("prefix = \"t\"\naxons = 1\nhosts = 3").unwrap_err();
        assert!(e.starts_with("line 3"), "{e}");
    }
}
