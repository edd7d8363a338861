"""Conversion rate per acquisition channel over the campaign week."""

import pandas as pd


def conversion_by_channel(path="data/channel_daily.csv"):
    """Each channel's conversion rate (conversions per visitor) over the whole period, best first."""
    df = pd.read_csv(path)
    # The period's rate is total conversions over total visitors: a plain mean of daily rates gives a
    # 12-visitor day the same weight as a 3,000-visitor day.
    totals = df.groupby("channel")[["conversions", "visitors"]].sum()
    return (totals["conversions"] / totals["visitors"]).sort_values(ascending=False)


if __name__ == "__main__":
    print(conversion_by_channel().map("{:.2%}".format).to_string())
