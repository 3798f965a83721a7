#!/usr/bin/python3
"""Writes bench/suites/conv-nets.suite: every distinct convolution of torchvision's ResNet-50
and MobileNet-v2 (batch 1, f32, 224x224 input), in NHWC and in NCHW, against oneDNN and
XNNPACK (issue 43).

Families (the case names' prefixes; each layer a `_nhwc` and a `_nchw` case):
  r50_cC_kK_RxR[s2]_H   ResNet-50's convolutions: C input and K output channels, an R x R window,
                        stride 1 or 2, an H x H input (the 7x7 stem, the bottlenecks' 1x1 and
                        3x3 layers, the 1x1 downsampling shortcuts);
  mv2_cC_kK_RxR[s2]_H   MobileNet-v2's dense convolutions (the 3x3 stem, the 1x1 expansions
                        and projections, the last 1x1 layer);
  mv2_dw_cC_RxR[s2]_H   MobileNet-v2's depthwise 3x3 convolutions (C groups of one channel).
Every padding is "same", (R - 1) / 2, a guarded read in the programs; dense layers run
bench/programs/conv_{nhwc,nchw}_same[_s2].tc against oneDNN and XNNPACK, depthwise ones
bench/programs/dwconv_{nhwc,nchw}_same[_s2].tc. The comment after each case counts the times
the layer occurs in its network (batch norms, ReLUs, pooling and the classifier are left out).
The layers are traced with forward hooks on the untrained networks (no weights are needed).
Usage: /usr/bin/python3 scripts/make-conv-nets-suite.py > bench/suites/conv-nets.suite
  (Debian's python3-torchvision)
"""

import collections

import torch
import torchvision

DENSE_PEERS = "peers=onednn.conv2d,xnnpack.conv2d"
DEPTHWISE_PEERS = "peers=onednn.depthwise_conv,xnnpack.depthwise_conv"

Layer = collections.namedtuple("Layer", "c k r stride groups h")


def trace(model):
    """The model's Conv2d layers in the order they run, each with its input's height."""
    layers = []

    def hook(module, inputs, output):
        x = inputs[0]
        n, c, h, w = x.shape
        r, s = module.kernel_size
        assert n == 1 and c == module.in_channels and h == w, (module, x.shape)
        assert r == s and module.stride[0] == module.stride[1] in (1, 2), module
        assert module.padding == ((r - 1) // 2, (r - 1) // 2), module
        assert module.dilation == (1, 1), module
        assert module.groups in (1, c) and (module.groups == 1 or module.out_channels == c), module
        assert module.padding_mode == "zeros", module
        layers.append(Layer(c, module.out_channels, r, module.stride[0], module.groups, h))

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, torch.nn.Conv2d)]
    model.eval()
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    for handle in handles:
        handle.remove()
    return layers


def name(net, layer):
    window = f"{layer.r}x{layer.r}" + ("s2" if layer.stride == 2 else "")
    if layer.groups > 1:
        return f"{net}_dw_c{layer.c}_{window}_{layer.h}"
    return f"{net}_c{layer.c}_k{layer.k}_{window}_{layer.h}"


def cases(net, layer):
    """The layer's NHWC and NCHW cases as (name, program, sizes, peers)."""
    suffix = "_s2" if layer.stride == 2 else ""
    if layer.groups > 1:
        form, peers, k = "dwconv", DEPTHWISE_PEERS, ""
    else:
        form, peers, k = "conv", DENSE_PEERS, f" K={layer.k}"
    for layout in ("nhwc", "nchw"):
        sizes = (f"N=1 H={layer.h} W={layer.h} C={layer.c}{k} R={layer.r}" if layout == "nhwc" else
                 f"N=1 C={layer.c} H={layer.h} W={layer.h}{k} R={layer.r}")
        yield (f"{name(net, layer)}_{layout}", f"bench/programs/{form}_{layout}_same{suffix}.tc", sizes,
               peers)


def line(case, program, sizes, peers, comment):
    return f"{case:<29} {program:<39} {sizes:<38} {peers:<51} # {comment}"


def main():
    nets = [("r50", "ResNet-50", torchvision.models.resnet50()),
            ("mv2", "MobileNet-v2", torchvision.models.mobilenet_v2())]
    out = [("# " + l).rstrip() for l in __doc__.strip().split("\n")] + [
        "#",
        "# Run with the scheme search and only the weights constant:",
        "#   build/tessel bench bench/suites/conv-nets.suite --threads 1,2 \\",
        '#       --options "scheme=search constant-inputs=Wt"',
        "# (--filter '^r50_' or '_nhwc$' picks one network or one layout.)",
        "#",
        line("# case", "program", "sizes", "peers", "occurrences"),
    ]
    seen = set()
    for net, title, model in nets:
        layers = trace(model)
        counts = collections.Counter(layers)
        distinct = list(dict.fromkeys(layers))
        out += ["", f"# {title}: {len(layers)} convolutions, {len(distinct)} distinct"]
        for layer in distinct:
            for case, program, sizes, peers in cases(net, layer):
                assert case not in seen, case
                seen.add(case)
                out.append(line(case, program, sizes, peers, f"x{counts[layer]}"))
    print("\n".join(out))


if __name__ == "__main__":
    main()
