import pytest
from django.core.exceptions import ImproperlyConfigured

from gangsched.settings.env import (
    parse_bool,
    parse_cluster_backend,
    parse_count,
    parse_list,
    parse_scheduler_aliases,
    parse_seconds,
)
from scheduler_core.engine.config import (
    DEFAULT_OVERTAKE_LIMIT_S,
    DEFAULT_PREEMPT_DEPTH,
    DEFAULT_REQUEUE_BACKOFF_MAX_S,
)
from scheduler_core.services.cycle import engine_config


def test_cluster_backend_defaults_to_simulated():
    assert parse_cluster_backend(None) == "simulated"
    assert parse_cluster_backend("") == "simulated"


@pytest.mark.parametrize("value", ["simulated", "kubernetes", " Kubernetes "])
def test_cluster_backend_accepts_the_known_backends(value):
    assert parse_cluster_backend(value) == value.strip().lower()


def test_cluster_backend_rejects_anything_else_naming_the_value():
    with pytest.raises(ImproperlyConfigured, match="CLUSTER_BACKEND='bogus'"):
        parse_cluster_backend("bogus")


@pytest.mark.parametrize(
    ("value", "expected"), [(None, False), ("1", True), ("true", True), ("0", False), ("", False)]
)
def test_debug_is_off_unless_asked_for(value, expected):
    assert parse_bool("DEBUG", value) is expected


def test_a_garbled_boolean_is_an_error():
    with pytest.raises(ImproperlyConfigured, match="DEBUG='maybe'"):
        parse_bool("DEBUG", "maybe")


def test_lists_are_comma_separated_with_blanks_dropped():
    assert parse_list(None, "127.0.0.1,localhost") == ["127.0.0.1", "localhost"]
    assert parse_list(" a.example , b.example,", "x") == ["a.example", "b.example"]


@pytest.mark.parametrize(("value", "expected"), [(None, 3600.0), ("", 3600.0), ("0", 0.0), ("90.5", 90.5)])
def test_seconds_default_when_unset_and_parse_otherwise(value, expected):
    assert parse_seconds("GANGSCHED_OVERTAKE_LIMIT_S", value, 3600.0) == expected


@pytest.mark.parametrize("value", ["soon", "-1", "inf", "nan"])
def test_bad_seconds_are_an_error_naming_the_variable(value):
    with pytest.raises(ImproperlyConfigured, match=f"GANGSCHED_OVERTAKE_LIMIT_S={value!r}"):
        parse_seconds("GANGSCHED_OVERTAKE_LIMIT_S", value, 3600.0)


@pytest.mark.parametrize(("value", "expected"), [(None, 16), ("", 16), ("0", 0), ("40", 40)])
def test_counts_default_when_unset_and_parse_otherwise(value, expected):
    assert parse_count("GANGSCHED_PREEMPT_DEPTH", value, 16) == expected


@pytest.mark.parametrize("value", ["many", "-1", "2.5"])
def test_bad_counts_are_an_error_naming_the_variable(value):
    with pytest.raises(ImproperlyConfigured, match=f"GANGSCHED_PREEMPT_DEPTH={value!r}"):
        parse_count("GANGSCHED_PREEMPT_DEPTH", value, 16)


def test_the_cycle_uses_the_preemption_depth_setting(settings):
    assert engine_config().preempt_depth == DEFAULT_PREEMPT_DEPTH
    settings.GANGSCHED_PREEMPT_DEPTH = 0
    assert engine_config().preempt_depth == 0


def test_the_cycle_uses_the_requeue_backoff_setting(settings):
    assert engine_config().requeue_backoff_max_s == DEFAULT_REQUEUE_BACKOFF_MAX_S
    settings.GANGSCHED_REQUEUE_BACKOFF_MAX_S = 0.0
    assert engine_config().requeue_backoff_max_s == 0.0


def test_the_cycle_uses_the_overtake_limit_setting(settings):
    assert engine_config().overtake_limit_s == DEFAULT_OVERTAKE_LIMIT_S
    settings.GANGSCHED_OVERTAKE_LIMIT_S = 0.0
    assert engine_config().overtake_limit_s == 0.0


def test_scheduler_aliases_are_names_other_than_gangsched_s_own():
    assert parse_scheduler_aliases("A", None, "gangsched") == []
    assert parse_scheduler_aliases("A", "volcano, gangsched,volcano,kai-scheduler", "gangsched") == [
        "volcano",
        "kai-scheduler",
    ]


@pytest.mark.parametrize("value", ["default-scheduler", "Volcano", "bad name", "-x"])
def test_a_scheduler_alias_that_would_take_the_wrong_pods_is_an_error(value):
    with pytest.raises(ImproperlyConfigured, match=r"GANGSCHED_SCHEDULER_ALIASES: "):
        parse_scheduler_aliases("GANGSCHED_SCHEDULER_ALIASES", value, "gangsched")
