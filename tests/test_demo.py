import json

from receval import jsontext
from receval.cli import main
from receval.cli.demo import _jsonable, run_demo

SIZE = {"users": 80, "items": 120, "ratings": 2500, "rounds": 10, "seed": 3}


def test_demo_json_and_files(tmp_path, capsys):
    args = ["demo", *(word for key, value in SIZE.items() for word in (f"--{key}", str(value)))]
    assert main([*args, "--json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stats"]["n_users"] <= 80
    one_shot = out["one_shot"]
    assert set(one_shot) == {"random", "popularity", "average", "item-knn", "user-knn", "mf", "hkv"}
    for system in one_shot.values():
        for metric, value in system.items():
            assert 0.0 <= value <= 1.0, metric
    # every rating predictor is scored, and the biases model beats the global mean on this data
    assert out["rmse"]["biases"]["rmse"] < out["rmse"]["global-mean"]["rmse"]
    assert -1.0 <= out["kendall_tau"]["recall_fallout"] <= 1.0
    written = {p.name for p in tmp_path.iterdir()}
    assert written == {"one_shot.csv", "rmse.csv", "cyclic.csv", "summary.json", "report.html"}
    report = (tmp_path / "report.html").read_text()
    assert "popularity" in report and "data:image/png;base64," in report
    # same seed, same numbers: computed again in this process and made JSON as the command makes it (without
    # the report and the files again, 5 of the test's 18 s)
    again = json.loads(jsontext.dumps(_jsonable(run_demo(**SIZE)), indent=2))
    assert again["one_shot"] == one_shot
