"""A plain L2 learning switch for os-ken (Ryu's maintained fork), OpenFlow 1.0, written for
bench/controller-vs-ovs.sh as the Python comparison point: the same behaviour as Ryu's sample
simple_switch (learn the source, flow_mod toward a known destination with the buffer id, flood
otherwise), which os-ken 4 no longer ships.

Run: python l2_learning.py PORT   (listens on 127.0.0.1:PORT)
"""
import sys

from os_ken import cfg
from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import MAIN_DISPATCHER, set_ev_cls
from os_ken.lib.packet import ethernet, packet
from os_ken.ofproto import ofproto_v1_0
import os_ken.controller.controller  # noqa: F401  (registers the --ofp-* options)


class L2Learning(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_0.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tables = {}

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    def packet_in(self, ev):
        msg = ev.msg
        dp = msg.datapath
        ofp, parser = dp.ofproto, dp.ofproto_parser
        eth = packet.Packet(msg.data).get_protocol(ethernet.ethernet)
        table = self.tables.setdefault(dp.id, {})
        table[eth.src] = msg.in_port
        out_port = table.get(eth.dst, ofp.OFPP_FLOOD)
        actions = [parser.OFPActionOutput(out_port)]
        if out_port != ofp.OFPP_FLOOD:
            match = parser.OFPMatch(in_port=msg.in_port, dl_dst=eth.dst)
            dp.send_msg(parser.OFPFlowMod(
                datapath=dp, match=match, cookie=0, command=ofp.OFPFC_ADD, idle_timeout=60,
                hard_timeout=0, priority=1, buffer_id=msg.buffer_id, actions=actions))
            if msg.buffer_id != ofp.OFP_NO_BUFFER:
                return
        data = msg.data if msg.buffer_id == ofp.OFP_NO_BUFFER else None
        dp.send_msg(parser.OFPPacketOut(datapath=dp, buffer_id=msg.buffer_id,
                                        in_port=msg.in_port, actions=actions, data=data))


if __name__ == "__main__":
    cfg.CONF(args=["--ofp-tcp-listen-port", sys.argv[1], "--ofp-listen-host", "127.0.0.1"],
             project="os_ken")
    app_manager.AppManager.run_apps([__name__])
