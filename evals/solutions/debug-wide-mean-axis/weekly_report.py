"""Average weekly sales per store, for the regional ranking."""

import pandas as pd


def average_weekly_sales(path="data/store_weekly.csv"):
    """Mean weekly sales of each store, best store first."""
    df = pd.read_csv(path)
    wide = df.pivot(index="store", columns="week", values="sales")
    avg = wide.mean(axis=1)  # across the weeks of each store (one row per store)
    return avg.sort_values(ascending=False)


if __name__ == "__main__":
    print(average_weekly_sales().round(1).to_string())
