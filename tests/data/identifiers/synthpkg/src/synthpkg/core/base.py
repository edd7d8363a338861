class Base:
    def describe(self, percentiles=None):
        return self

    def __getattr__(self, name):
        return self.column(name)


def passthrough(func):
    return func
