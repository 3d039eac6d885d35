//! Where a backend's replies go: [`ReplySink`]. Collected as [`Reply`] values (`Vec<Reply>`,
//! what tests compare and apps produce), or encoded in place into each datapath's bytes
//! ([`EncodedReplies`], what the live server writes to the switches): a reply the learning
//! switch fills into a reused message is encoded straight into the output, with no allocation
//! per event.

use crate::app::{App, Reply};
use crate::event::PacketInEvent;
use rustc_hash::FxHashMap;
use tandem_wire::openflow::Message;

/// Takes the replies a backend produces for a batch.
pub trait ReplySink: Default + Send {
    /// Whether [`ReplySink::push_ref`] is the cheap way in (the sink encodes from the
    /// reference); when false the sink keeps owned messages, and a producer builds each reply
    /// fresh for [`ReplySink::push`] rather than have a reused one copied.
    const BY_REFERENCE: bool;
    /// Takes a reply built by its producer.
    fn push(&mut self, reply: Reply);
    /// Takes a message its producer keeps (a reused template): the sink encodes or copies it.
    fn push_ref(&mut self, dpid: u64, message: &Message);
    /// Moves `other`'s replies after this one's (for each datapath, in order), leaving
    /// `other` empty.
    fn append(&mut self, other: &mut Self);
    /// Has `app` answer a packet_in into this sink, through the app's entry point for it.
    fn answer<A: App + ?Sized>(&mut self, app: &mut A, now_ps: u64, dpid: u64, ev: &PacketInEvent);
}

impl ReplySink for Vec<Reply> {
    const BY_REFERENCE: bool = false;
    #[inline]
    fn push(&mut self, reply: Reply) {
        Vec::push(self, reply);
    }
    #[inline]
    fn push_ref(&mut self, dpid: u64, message: &Message) {
        Vec::push(
            self,
            Reply {
                dpid,
                message: message.clone(),
            },
        );
    }
    fn append(&mut self, other: &mut Self) {
        Vec::append(self, other);
    }
    #[inline]
    fn answer<A: App + ?Sized>(&mut self, app: &mut A, now_ps: u64, dpid: u64, ev: &PacketInEvent) {
        app.on_packet_in(now_ps, dpid, ev, self);
    }
}

/// One datapath's encoded replies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatapathBytes {
    /// The datapath the bytes go to.
    pub dpid: u64,
    /// Messages in `bytes`.
    pub messages: usize,
    /// The messages, encoded back to back in the order they were pushed.
    pub bytes: Vec<u8>,
}

/// Replies encoded in place: every message is appended, encoded, to its datapath's bytes as it
/// is pushed. Datapaths are kept in the order of their first reply; a message that does not
/// encode is left out and counted ([`EncodedReplies::failed`]).
#[derive(Debug, Clone, Default)]
pub struct EncodedReplies {
    index: FxHashMap<u64, usize>,
    parts: Vec<DatapathBytes>,
    /// The last datapath's place in `parts` (replies come in runs to one datapath).
    last: Option<(u64, usize)>,
    failed: u64,
}

impl EncodedReplies {
    /// An empty output.
    pub fn new() -> EncodedReplies {
        EncodedReplies::default()
    }

    fn part(&mut self, dpid: u64) -> &mut DatapathBytes {
        let i = match self.last {
            Some((d, i)) if d == dpid => i,
            _ => {
                // A few datapaths: a scan beats hashing; many: the index.
                let found = if self.parts.len() <= 8 {
                    self.parts.iter().position(|p| p.dpid == dpid)
                } else {
                    self.index.get(&dpid).copied()
                };
                let i = found.unwrap_or_else(|| {
                    self.parts.push(DatapathBytes {
                        dpid,
                        ..DatapathBytes::default()
                    });
                    self.index.insert(dpid, self.parts.len() - 1);
                    self.parts.len() - 1
                });
                self.last = Some((dpid, i));
                i
            }
        };
        &mut self.parts[i]
    }

    /// Encodes `message` at the end of `dpid`'s bytes; false (and counted) when it does not
    /// encode.
    #[inline]
    pub fn encode(&mut self, dpid: u64, message: &Message) -> bool {
        let part = self.part(dpid);
        let at = part.bytes.len();
        part.bytes.resize(at + message.buffer_len(), 0);
        match message.emit(&mut part.bytes[at..]) {
            Ok(()) => {
                part.messages += 1;
                true
            }
            Err(_) => {
                part.bytes.truncate(at);
                self.failed += 1;
                false
            }
        }
    }

    /// Messages encoded and not yet taken.
    pub fn messages(&self) -> usize {
        self.parts.iter().map(|p| p.messages).sum()
    }

    /// Whether nothing is waiting to be taken.
    pub fn is_empty(&self) -> bool {
        self.parts.iter().all(|p| p.messages == 0)
    }

    /// Messages that did not encode since the last [`EncodedReplies::take_failed`].
    pub fn failed(&self) -> u64 {
        self.failed
    }

    /// Returns and resets the count of messages that did not encode.
    pub fn take_failed(&mut self) -> u64 {
        std::mem::take(&mut self.failed)
    }

    /// The encoded replies so far, one entry per datapath in the order of its first reply.
    pub fn parts(&self) -> &[DatapathBytes] {
        &self.parts
    }

    /// Takes every datapath's bytes, leaving the output empty.
    pub fn drain(&mut self) -> impl Iterator<Item = DatapathBytes> + '_ {
        self.index.clear();
        self.last = None;
        self.parts.drain(..).filter(|p| p.messages > 0)
    }
}

impl ReplySink for EncodedReplies {
    const BY_REFERENCE: bool = true;
    #[inline]
    fn push(&mut self, reply: Reply) {
        self.encode(reply.dpid, &reply.message);
    }
    #[inline]
    fn push_ref(&mut self, dpid: u64, message: &Message) {
        self.encode(dpid, message);
    }
    fn append(&mut self, other: &mut Self) {
        self.failed += std::mem::take(&mut other.failed);
        for p in other.drain() {
            let mine = self.part(p.dpid);
            mine.messages += p.messages;
            if mine.bytes.is_empty() {
                mine.bytes = p.bytes;
            } else {
                mine.bytes.extend_from_slice(&p.bytes);
            }
        }
    }
    #[inline]
    fn answer<A: App + ?Sized>(&mut self, app: &mut A, now_ps: u64, dpid: u64, ev: &PacketInEvent) {
        app.on_packet_in_encoded(now_ps, dpid, ev, self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_wire::openflow::{Body, Version};

    fn echo(xid: u32, data: Vec<u8>) -> Message {
        Message {
            version: Version::V1_0,
            xid,
            body: Body::EchoRequest(data),
        }
    }

    #[test]
    fn messages_are_encoded_per_datapath_in_order() {
        let mut a = EncodedReplies::new();
        a.push_ref(7, &echo(1, vec![1]));
        a.push_ref(3, &echo(2, vec![]));
        a.push(Reply {
            dpid: 7,
            message: echo(3, vec![2, 2]),
        });
        let mut b = EncodedReplies::new();
        b.push_ref(3, &echo(4, vec![]));
        b.push_ref(9, &echo(5, vec![]));
        a.append(&mut b);
        assert!(b.is_empty());
        assert_eq!(a.messages(), 5);
        let want = |msgs: &[Message]| msgs.iter().flat_map(|m| m.to_bytes().unwrap()).collect::<Vec<u8>>();
        let parts: Vec<DatapathBytes> = a.drain().collect();
        assert_eq!(
            parts.iter().map(|p| (p.dpid, p.messages)).collect::<Vec<_>>(),
            [(7, 2), (3, 2), (9, 1)]
        );
        assert_eq!(parts[0].bytes, want(&[echo(1, vec![1]), echo(3, vec![2, 2])]));
        assert_eq!(parts[1].bytes, want(&[echo(2, vec![]), echo(4, vec![])]));
        assert!(a.is_empty() && a.parts().is_empty());
    }

    #[test]
    fn a_message_too_long_to_encode_is_counted_not_sent() {
        let mut a = EncodedReplies::new();
        a.push_ref(1, &echo(1, vec![0; 70_000]));
        a.push_ref(1, &echo(2, vec![]));
        assert_eq!((a.messages(), a.failed()), (1, 1));
        assert_eq!(a.parts()[0].bytes, echo(2, vec![]).to_bytes().unwrap());
        assert_eq!(a.take_failed(), 1);
        assert_eq!(a.failed(), 0);
    }
}
