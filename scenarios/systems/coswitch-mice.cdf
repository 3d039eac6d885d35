# Flow sizes shaped like the CoSwitch paper's trace statistics, as the CoSwitch experiments
# build them (docs/systems/coswitch.md, "The workload"): 62% one packet, 15% two, 11% 3-17
# packets, 2% 18-36, 10% a heavy tail up to 20,000 packets (here 1,448-byte segments).
# bytes percent
1 0
400 62
2896 77
24616 88
52128 90
150000 95
1000000 98.5
29000000 100
