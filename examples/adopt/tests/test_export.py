"""Export my posts: the view queues the job, the worker runs it, and Herald carries its
started, progress and succeeded (or failed) under one correlation id, to its user alone."""
from chirp.extensions import db, herald
from chirp.models import Export


def test_an_export_reports_its_progress_to_its_user(app, users, sign_in, run_jobs):
    alice = sign_in("alice")
    for number in range(3):
        alice.post("/posts", data={"body": f"post {number}"})
    reply = alice.post("/export", headers={"Accept": "application/json"})
    assert reply.status_code == 202
    export_id = reply.get_json()["id"]
    with herald.record() as sent:
        run_jobs()
    assert sent.topics[0] == "job.export.started" and sent.topics[-1] == "job.export.succeeded"
    assert set(sent.topics[1:-1]) <= {"job.export.progress"}
    assert {n["correlation_id"] for n in sent} == {sent[0]["correlation_id"]}
    assert {n["user"] for n in sent} == {str(users["alice"][0])}
    assert {n["url"] for n in sent} == {"http://chirp.test/export"}  # HERALD_APP_URL: no request here
    done = sent[-1]["data"]
    assert (done["percent"], done["rows"], done["download"]) == (100, 3, f"/export/{export_id}.csv")
    csv = alice.get(done["download"]).get_data(as_text=True)
    assert csv.splitlines()[0] == "id,created_at,body" and len(csv.splitlines()) == 4
    assert sign_in("bob").get(done["download"]).status_code == 404


def test_an_export_that_fails_says_so(app, users, sign_in, run_jobs):
    alice = sign_in("alice")
    alice.post("/export", headers={"Accept": "application/json"})
    with app.app_context():  # the export's row is gone: the job cannot run
        db.session.execute(db.delete(Export))
        db.session.commit()
    with herald.record() as sent:
        run_jobs()
    assert sent.topics == []  # it failed before it began: nothing to say

    alice.post("/posts", data={"body": "one"})
    export_id = alice.post("/export", headers={"Accept": "application/json"}).get_json()["id"]
    app.config["EXPORT_PACE"] = "not a number"  # time.sleep() raises inside the job
    with herald.record() as sent:
        run_jobs()
    assert sent.topics == ["job.export.started", "job.export.failed"]
    assert sent[-1]["data"]["error_type"] == "TypeError"
    with app.app_context():
        assert db.session.get(Export, export_id).status == "failed"
