"""A documented, rule-based query type for spatial queries that carry none (Chinese first).

Real POI queries (GeoGLUE, LIST) have no type column, and whitespace word counts put every
Chinese query in one length bucket. The importers therefore write two slice columns:

* ``query_chars``: the length of the query text in characters (Unicode code points after NFKC
  normalisation, whitespace not counted); the slice code buckets it.
* ``query_type``: the first rule that matches, in this order:

  ============  =====================================================  ========================
  type          rule (regular expressions on the NFKC text)            example
  ============  =====================================================  ========================
  route         a travel request or turn-by-turn directions:           我想去金星路怎么走;
                怎么走 怎么去 如何(去|到|走) 路线 导航 左转 右转        往东南走90米后左转
                (走|行)\\d+米 ; English "how to get", "route to"
  intersection  a crossing as the reference: 交叉口 交叉路口 十字路口   文一路与学院路交叉口
                三岔口 路口 ; English "junction", "intersection"    西南方向170米…
  landmark      a position relative to another place: 附近 旁 对面      天香华庭对面南郡正南门
                周边 周围 边上 路边 隔壁 邻近 对街 里面 内部 or a
                direction (东/西/南/北 + 侧/边/面/门外/方向, 路北方,
                西90米, 以南, 往东, 向北, 右侧 …)
                ; English "near", "next to", "opposite"
  address       a street number or building number: \\d+(号|弄|巷)      莫干山路东村43幢
                (not 号楼/号线), \\d+(幢|栋|座|单元|室|号楼),
                (路|街|道)\\d+
                ; English a number followed by a street word
  category      a short (<= 6 characters) generic place word:          停车场; 农贸市场
                ends with 停车场 银行 医院 超市 酒店 餐厅 饭店 药店
                加油站 公交站 地铁站 学校 幼儿园 公园 厕所 卫生间
                便利店 市场 ATM 快递柜 …
  name          anything else: the name of a place                     紫金文苑
  ============  =====================================================  ========================

The rules are heuristics for slicing, not ground truth; a dataset that carries its own
``query_type`` keeps it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import numpy as np
import pandas as pd

QUERY_TYPES = ("route", "intersection", "landmark", "address", "category", "name")

_DIR = "[东西南北]"
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "route",
        re.compile(
            r"怎么走|怎么去|怎样去|如何(?:去|到|走)|路线|导航|[左右]转|[走行]\d+米"
            r"|how (?:do i |to )?get|route to|directions? to",
            re.IGNORECASE,
        ),
    ),
    (
        "intersection",
        re.compile(
            r"交叉口|交叉路口|十字路口|三岔口|路口|junction|intersection|crossing", re.IGNORECASE
        ),
    ),
    (
        "landmark",
        re.compile(
            r"附近|旁|对面|周边|周围|边上|路边|隔壁|邻近|对街|里面|内部"
            rf"|{_DIR}(?:侧|边|面|门外|方向)|路{_DIR}方|向{_DIR}|[左右](?:侧|边)|{_DIR}向?\d+米|以{_DIR}|往{_DIR}|偏{_DIR}|{_DIR}{{2}}(?:侧|方)"
            r"|\bnear\b|next to|opposite|beside|close to",
            re.IGNORECASE,
        ),
    ),
    (
        "address",
        re.compile(
            r"\d+(?:号(?!楼|线)|弄|巷)|\d+(?:幢|栋|座|单元|室|号楼)|(?:路|街|道)\d+"
            r"|\b\d+[a-z]?\s+\w+\s+(?:street|st|road|rd|avenue|ave|lane|ln)\b",
            re.IGNORECASE,
        ),
    ),
)
_CATEGORY = re.compile(
    r"(?:停车场|停车点|银行|医院|超市|酒店|宾馆|餐厅|饭店|药店|药房|加油站|公交站|地铁站|学校"
    r"|幼儿园|公园|厕所|卫生间|便利店|市场|菜场|ATM|快递柜|咖啡(?:店|馆|厅)?|书店|火锅|小吃|美食|网吧|健身房"
    r"|理发店|洗车|充电站|诊所|派出所)$",
    re.IGNORECASE,
)
CATEGORY_MAX_CHARS = 6


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", str(text))


def query_type(text: str) -> str:
    """The type of one query text (see the module table)."""
    t = _normal(text)
    for name, pattern in _RULES:
        if pattern.search(t):
            return name
    compact = re.sub(r"\s+", "", t)
    if len(compact) <= CATEGORY_MAX_CHARS and _CATEGORY.search(compact):
        return "category"
    return "name"


def query_types(texts: Iterable[str]) -> pd.Series:
    """:func:`query_type` of every text, as a string Series."""
    return pd.Series([query_type(t) for t in texts], dtype="str")


def query_chars(texts: Iterable[str]) -> np.ndarray:
    """Characters per query: code points of the NFKC text without whitespace (int64)."""
    return np.array([len(re.sub(r"\s+", "", _normal(t))) for t in texts], dtype=np.int64)
