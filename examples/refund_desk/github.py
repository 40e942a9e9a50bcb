"""GitHub tools: issues, pull requests, commits and CI workflow runs of the code repositories."""

from __future__ import annotations

from datetime import date
from typing import Literal

from toolrelay.tools import ToolContext, tool

from .backend import RefundDeskBackend
from .common import actor_of, detached
from .records import Commit, GitHubIssue, PullRequest, RefundDeskError, WorkflowRun

__all__ = ["GitHubService"]

State = Literal["open", "closed", "all"]


class GitHubService:
    """GitHub tools over a :class:`RefundDeskBackend`."""

    def __init__(self, backend: RefundDeskBackend) -> None:
        self.backend = backend

    @tool(name="github.search_issues", read_only=True)
    def search_issues(
        self, query: str, repo: str | None = None, state: State = "open", limit: int = 10
    ) -> list[GitHubIssue]:
        """Read-only search of GitHub issues by words in the title or body.

        Use to find whether engineers already track a code defect, e.g. "cardpay timeout".
        GitHub issues are about code; business incidents live in the ticket platform
        (ticket.search). It changes nothing.

        Args:
            query: Words that must all appear in the title or body (case-insensitive).
            repo: Only this repository, e.g. "acme/refund-service".
            state: Issue state to include.
            limit: Maximum number of issues to return.
        """
        words = query.lower().split()
        found = [
            i
            for i in self.backend.issues.values()
            if repo in (None, i.repo)
            and state in ("all", i.state)
            and all(w in f"{i.title} {i.body}".lower() for w in words)
        ]
        return detached(found[:limit])

    @tool(name="github.get_issue", read_only=True)
    def get_issue(self, repo: str, number: int) -> GitHubIssue:
        """Read-only lookup of one GitHub issue with its labels and comments.

        Use when an issue number is known, e.g. from a ticket comment. It changes nothing.

        Args:
            repo: Repository as "owner/name", e.g. "acme/refund-service".
            number: Issue number, e.g. 412.
        """
        return detached(self.backend.issue(repo, number))

    @tool(name="github.create_issue")
    def create_issue(
        self, repo: str, title: str, body: str, labels: list[str] | None = None
    ) -> GitHubIssue:
        """Open a GitHub issue reporting a code defect to the engineers of a repository.

        Use for bugs in software, e.g. a client timeout that is too low. Do not use it for
        individual failing refunds or customer cases; those are incidents in the ticket
        platform (ticket.create_incident). Side effect: the issue is public to the repository.

        Args:
            repo: Repository as "owner/name", e.g. "acme/refund-service".
            title: Issue title.
            body: Issue body in Markdown: what happens, what should happen, evidence.
            labels: Labels to apply, e.g. ["bug"].
        """
        number = max((n for r, n in self.backend.issues if r == repo), default=0) + 1
        issue = GitHubIssue(
            repo=repo,
            number=number,
            title=title,
            body=body,
            state="open",
            author="toolrelay-bot",
            labels=list(labels or []),
        )
        self.backend.issues[(repo, number)] = issue
        self.backend.tick()
        self.backend.audit("toolrelay-bot", f"opened {repo}#{number}")
        return detached(issue)

    @tool(name="github.comment_on_issue")
    def comment_on_issue(
        self, repo: str, number: int, body: str, context: ToolContext | None = None
    ) -> GitHubIssue:
        """Add a comment to a GitHub issue, e.g. new evidence such as affected refund ids.

        Side effect: the comment is visible to everyone with access to the repository. It does
        not change the issue state.

        Args:
            repo: Repository as "owner/name".
            number: Issue number.
            body: Comment text in Markdown.
        """
        issue = self.backend.issue(repo, number)
        issue.comments.append(body)
        self.backend.tick()
        self.backend.audit(actor_of(context), f"commented on {repo}#{number}")
        return detached(issue)

    @tool(name="github.close_issue")
    def close_issue(
        self, repo: str, number: int, comment: str, context: ToolContext | None = None
    ) -> GitHubIssue:
        """Close a GitHub issue with a final comment, e.g. after the fix was deployed.

        Side effect: the issue is closed for everyone. It does not close related tickets in
        the ticket platform.

        Args:
            repo: Repository as "owner/name".
            number: Issue number.
            comment: Why the issue is closed.
        """
        issue = self.backend.issue(repo, number)
        issue.state = "closed"
        issue.comments.append(comment)
        self.backend.tick()
        self.backend.audit(actor_of(context), f"closed {repo}#{number}")
        return detached(issue)

    @tool(name="github.get_pull_request", read_only=True)
    def get_pull_request(self, repo: str, number: int) -> PullRequest:
        """Read-only details of a pull request: title, author, state, merged flag, files.

        Use to check whether a fix was merged, e.g. the cardpay timeout change. It changes
        nothing.

        Args:
            repo: Repository as "owner/name".
            number: Pull request number, e.g. 415.
        """
        pull = self.backend.pull_requests.get((repo, number))
        if pull is None:
            raise RefundDeskError(f"no pull request {repo}#{number}")
        return detached(pull)

    @tool(name="github.list_pull_requests", read_only=True)
    def list_pull_requests(self, repo: str, state: State = "open") -> list[PullRequest]:
        """Read-only list of the pull requests of a repository by state.

        Use to see what changes are pending review or were recently merged. It changes
        nothing.

        Args:
            repo: Repository as "owner/name".
            state: Pull request state to include.
        """
        pulls = self.backend.pull_requests.values()
        return detached([p for p in pulls if p.repo == repo and state in ("all", p.state)])

    @tool(name="github.list_recent_commits", read_only=True)
    def list_recent_commits(
        self, repo: str, since: date | None = None, path: str | None = None
    ) -> list[Commit]:
        """Read-only list of recent commits of a repository, optionally touching a path.

        Use to find which code change may have caused a wave of failures, or to confirm a
        fix shipped. It changes nothing.

        Args:
            repo: Repository as "owner/name".
            since: Only commits on or after this day, as YYYY-MM-DD.
            path: Only commits touching a file whose path starts with this prefix.
        """
        found = [
            c
            for c in self.backend.commits
            if c.repo == repo
            and (since is None or c.at.date() >= since)
            and (path is None or any(p.startswith(path) for p in c.paths))
        ]
        return detached(sorted(found, key=lambda c: c.at, reverse=True))

    @tool(name="github.list_workflow_runs", read_only=True)
    def list_workflow_runs(
        self,
        repo: str,
        conclusion: Literal["success", "failure", "cancelled"] | None = None,
    ) -> list[WorkflowRun]:
        """Read-only list of CI workflow runs (tests, deploys) of a repository.

        Use to check whether the latest deploy succeeded or which nightly run failed. It
        does not start or rerun workflows.

        Args:
            repo: Repository as "owner/name".
            conclusion: Only runs that ended with this conclusion.
        """
        runs = self.backend.workflow_runs.values()
        return detached([r for r in runs if r.repo == repo and conclusion in (None, r.conclusion)])

    @tool(name="github.rerun_workflow")
    def rerun_workflow(
        self, repo: str, run_id: int, context: ToolContext | None = None
    ) -> WorkflowRun:
        """Re-run a finished CI workflow run, e.g. a flaky nightly integration test.

        Side effect: queues a new attempt of the run, which may deploy code if the workflow
        is a deploy. It does not change any code.

        Args:
            repo: Repository as "owner/name".
            run_id: Workflow run id, e.g. 5102.
        """
        run = self.backend.workflow_runs.get(run_id)
        if run is None or run.repo != repo:
            raise RefundDeskError(f"no workflow run {run_id} in {repo}")
        if run.status != "completed":
            raise RefundDeskError(f"workflow run {run_id} is still {run.status}")
        run.status = "queued"
        run.conclusion = None
        run.attempt += 1
        run.started_at = self.backend.tick()
        self.backend.audit(actor_of(context), f"reran workflow {run_id} of {repo}")
        return detached(run)
