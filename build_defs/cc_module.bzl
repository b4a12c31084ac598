"""cc_module: the house convention that a library is one `<name>.cc` and its `<name>.h`."""

def cc_module(name, **kwargs):
    """A cc_library `name` built from `<name>.cc` with the header `<name>.h`.

    Every other cc_library attribute (deps, visibility, testonly, copts, data...) passes through
    `kwargs` unchanged, so a library without deps stays one without them.
    """
    native.cc_library(name = name, srcs = [name + ".cc"], hdrs = [name + ".h"], **kwargs)
