"""Monthly payment totals from the bank export (a UK bank: dates are dd/mm/yyyy)."""

import pandas as pd


def monthly_totals(path="data/payments.csv"):
    """Sum of payments per calendar month, indexed by monthly Period."""
    df = pd.read_csv(path)
    # an explicit format: day first, and a date that does not fit raises instead of being guessed
    df["date"] = pd.to_datetime(df["date"], format="%d/%m/%Y")
    return df.groupby(df["date"].dt.to_period("M"))["amount"].sum()


if __name__ == "__main__":
    print(monthly_totals().round(2).to_string())
