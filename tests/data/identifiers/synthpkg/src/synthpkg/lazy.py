def __getattr__(name):
    raise AttributeError(name)


def known():
    return 1
