//! Self-congestion (§3.3.3): every host frame grows by an Axon header on its way out, so a host
//! sending at line rate can overflow an otherwise idle output buffer. The device counts the
//! header bytes each host port has added and, once they reach a maximum-sized frame's worth,
//! sends the host a PAUSE asking it to wait as long as a maximum-sized frame takes to send.

use crate::config::PauseConfig;
use tandem_wire::ethernet::EthernetRepr;
use tandem_wire::pause::{PauseRepr, PAUSE_DST, QUANTUM_BITS};
use tandem_wire::{EtherType, MacAddr};

/// Header bytes added per host port since its last PAUSE.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderDebt {
    bytes: u64,
}

impl HeaderDebt {
    /// Adds `header_bytes`; true when a PAUSE is due (the debt drops by one threshold).
    pub fn add(&mut self, cfg: &PauseConfig, header_bytes: usize) -> bool {
        if !cfg.enabled {
            return false;
        }
        self.bytes += header_bytes as u64;
        if self.bytes >= cfg.header_bytes_per_pause {
            self.bytes -= cfg.header_bytes_per_pause;
            return true;
        }
        false
    }

    /// Header bytes counted since the last PAUSE.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Pause quanta (512 bit times each, rounded up) that last as long as `bytes` take to send.
pub fn quanta_for(bytes: u64) -> u16 {
    (bytes * 8).div_ceil(QUANTUM_BITS).min(u64::from(u16::MAX)) as u16
}

/// An 802.3x PAUSE frame from `src` for `quanta`, padded to 60 bytes.
pub fn pause_frame(src: MacAddr, quanta: u16) -> Vec<u8> {
    let eth = EthernetRepr {
        dst: PAUSE_DST,
        src,
        vlan: None,
        ethertype: EtherType::MAC_CONTROL,
    };
    let p = PauseRepr::Pause { quanta };
    let hl = eth.header_len();
    let mut f = vec![0u8; (hl + p.buffer_len()).max(60)];
    // Both emits only fail on a short buffer, which this one is not.
    let _ = eth.emit(&mut f);
    let _ = p.emit(&mut f[hl..]);
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::{ethernet, pause};

    #[test]
    fn debt_and_frame() {
        let cfg = PauseConfig::default();
        let mut d = HeaderDebt::default();
        // 7-byte headers: the 217th frame brings the debt to 1,519 >= 1,518.
        let due: Vec<usize> = (1..=300).filter(|_| d.add(&cfg, 7)).collect();
        assert_eq!(due, [217]);
        assert_eq!(d.bytes(), 300 * 7 - 1518);
        assert_eq!(quanta_for(1518), 24);
        let f = pause_frame(MacAddr([2, 0, 0, 0, 0, 9]), 24);
        let e = ethernet::Frame::new_checked(&f[..]).unwrap();
        assert_eq!(e.dst_addr(), PAUSE_DST);
        assert_eq!(
            PauseRepr::parse(&pause::Packet::new_checked(e.payload()).unwrap()).unwrap(),
            PauseRepr::Pause { quanta: 24 }
        );
        let off = PauseConfig { enabled: false, ..cfg };
        assert!(!HeaderDebt::default().add(&off, 10_000));
    }
}
