class Grouped:
    def total(self, min_count=0):
        return None

    def transform(self, func):
        return None
