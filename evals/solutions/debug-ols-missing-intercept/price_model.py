"""House price model: price (in $1000s) on floor area and age."""

import pandas as pd
import statsmodels.api as sm


def fit_price_model(path="data/houses.csv"):
    """OLS of price on sqft and age; returns the statsmodels results."""
    df = pd.read_csv(path)
    # sm.OLS fits exactly the columns it is given: without a constant the plane is forced through the origin
    X = sm.add_constant(df[["sqft", "age"]])
    return sm.OLS(df["price"], X).fit()


if __name__ == "__main__":
    print(fit_price_model().summary())
