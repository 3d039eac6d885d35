//! Ports: what is at the other end of each link (§3.1.3) and whether the link is up.

/// What a port is connected to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// Not known yet: the bootstrap exchange is under way. Frames from it are dropped until a
    /// hello arrives (an Axon port) or the bootstrap timeout passes (a host port).
    Unknown,
    /// A conventional Ethernet device (host, router, standard switch): standard frames.
    Host,
    /// Another Axon: Axon frames.
    Axon,
}

/// The Axon at the other end of an Axon port, as its hello said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Neighbor {
    /// Its device id.
    pub device_id: u64,
    /// Its port number on that link.
    pub port: u8,
}

/// One port's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortState {
    /// What it is connected to.
    pub kind: PortKind,
    /// Whether its link is up.
    pub link_up: bool,
    /// When its link last came up (the bootstrap timeout counts from here).
    pub link_up_at: u64,
    /// The neighbor Axon, once a hello has named it.
    pub neighbor: Option<Neighbor>,
    /// Set by configuration ([`crate::Device::set_port_kind`]) rather than bootstrap: a link
    /// going down does not forget it.
    pub configured: bool,
}

impl PortState {
    /// A port whose link is up since time 0 and whose kind is not known yet.
    pub fn new() -> PortState {
        PortState {
            kind: PortKind::Unknown,
            link_up: true,
            link_up_at: 0,
            neighbor: None,
            configured: false,
        }
    }

    /// Whether frames can leave through it: link up and kind known.
    pub fn can_send(&self) -> bool {
        self.link_up && self.kind != PortKind::Unknown
    }
}

impl Default for PortState {
    fn default() -> Self {
        PortState::new()
    }
}
