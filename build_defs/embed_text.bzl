"""embed_text: a file's text compiled into the binary as a C string."""

def embed_text(name, src, symbol, namespace, **kwargs):
    """A cc_library `name` that defines `const char <namespace>::<symbol>[]`: the text of `src`.

    Declare it where it is used as `extern const char <symbol>[];` in that namespace. The text is
    a raw string literal delimited by `tuna_src`, so `src` must not contain `)tuna_src"`.
    """
    native.genrule(
        name = name + "_cc",
        srcs = [src],
        outs = [name + ".cc"],
        cmd = ("(echo 'namespace {ns} {{ extern const char {sym}[]; const char {sym}[] = R\"tuna_src('; " +
               "cat $(location {src}); echo ')tuna_src\"; }}') > $@").format(ns = namespace, sym = symbol, src = src),
    )
    native.cc_library(name = name, srcs = [":" + name + "_cc"], **kwargs)
