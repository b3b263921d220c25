package storetrace

// The methods of store.Store, one span each (see Store.Start), in the order
// store.go declares them.

import (
	"context"
	"time"

	"github.com/latchkey-dev/latchkey/paginate"
	"github.com/latchkey-dev/latchkey/store"
)

func (s *Store) CreateProject(ctx context.Context, p store.Project) error {
	ctx, span := s.Start(ctx, "store.CreateProject", "")
	err := s.st.CreateProject(ctx, p)
	End(span, err)
	return err
}

func (s *Store) GetProject(ctx context.Context, id string) (store.Project, error) {
	ctx, span := s.Start(ctx, "store.GetProject", "")
	r0, err := s.st.GetProject(ctx, id)
	End(span, err)
	return r0, err
}

func (s *Store) ListProjects(ctx context.Context) ([]store.Project, error) {
	ctx, span := s.Start(ctx, "store.ListProjects", "")
	r0, err := s.st.ListProjects(ctx)
	End(span, err)
	return r0, err
}

func (s *Store) CreateUser(ctx context.Context, u store.User) error {
	ctx, span := s.Start(ctx, "store.CreateUser", "")
	err := s.st.CreateUser(ctx, u)
	End(span, err)
	return err
}

func (s *Store) GetUser(ctx context.Context, projectID string, id string) (store.User, error) {
	ctx, span := s.Start(ctx, "store.GetUser", projectID)
	r0, err := s.st.GetUser(ctx, projectID, id)
	End(span, err)
	return r0, err
}

func (s *Store) GetUserByEmail(ctx context.Context, projectID string, email string) (store.User, error) {
	ctx, span := s.Start(ctx, "store.GetUserByEmail", projectID)
	r0, err := s.st.GetUserByEmail(ctx, projectID, email)
	End(span, err)
	return r0, err
}

func (s *Store) ListUsers(ctx context.Context, projectID string, emailPrefix string, req paginate.Request) (paginate.Page[store.User], error) {
	ctx, span := s.Start(ctx, "store.ListUsers", projectID)
	r0, err := s.st.ListUsers(ctx, projectID, emailPrefix, req)
	End(span, err)
	return r0, err
}

func (s *Store) SetPasswordHash(ctx context.Context, projectID string, id string, hash string) error {
	ctx, span := s.Start(ctx, "store.SetPasswordHash", projectID)
	err := s.st.SetPasswordHash(ctx, projectID, id, hash)
	End(span, err)
	return err
}

func (s *Store) ReplacePasswordHash(ctx context.Context, projectID string, id string, old string, hash string) error {
	ctx, span := s.Start(ctx, "store.ReplacePasswordHash", projectID)
	err := s.st.ReplacePasswordHash(ctx, projectID, id, old, hash)
	End(span, err)
	return err
}

func (s *Store) SetUserTags(ctx context.Context, projectID string, id string, tags []string) error {
	ctx, span := s.Start(ctx, "store.SetUserTags", projectID)
	err := s.st.SetUserTags(ctx, projectID, id, tags)
	End(span, err)
	return err
}

func (s *Store) DisableUser(ctx context.Context, projectID string, id string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.DisableUser", projectID)
	err := s.st.DisableUser(ctx, projectID, id, at)
	End(span, err)
	return err
}

func (s *Store) EnableUser(ctx context.Context, projectID string, id string) error {
	ctx, span := s.Start(ctx, "store.EnableUser", projectID)
	err := s.st.EnableUser(ctx, projectID, id)
	End(span, err)
	return err
}

func (s *Store) EndUserSessions(ctx context.Context, projectID string, id string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.EndUserSessions", projectID)
	err := s.st.EndUserSessions(ctx, projectID, id, at)
	End(span, err)
	return err
}

func (s *Store) CreateContact(ctx context.Context, c store.Contact) (store.Contact, error) {
	ctx, span := s.Start(ctx, "store.CreateContact", "")
	r0, err := s.st.CreateContact(ctx, c)
	End(span, err)
	return r0, err
}

func (s *Store) CreateContacts(ctx context.Context, projectID string, cs []store.Contact) error {
	ctx, span := s.Start(ctx, "store.CreateContacts", projectID)
	err := s.st.CreateContacts(ctx, projectID, cs)
	End(span, err)
	return err
}

func (s *Store) ListContacts(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Contact], error) {
	ctx, span := s.Start(ctx, "store.ListContacts", projectID)
	r0, err := s.st.ListContacts(ctx, projectID, req)
	End(span, err)
	return r0, err
}

func (s *Store) DeleteContact(ctx context.Context, projectID string, id string) error {
	ctx, span := s.Start(ctx, "store.DeleteContact", projectID)
	err := s.st.DeleteContact(ctx, projectID, id)
	End(span, err)
	return err
}

func (s *Store) CreateAPIKey(ctx context.Context, k store.APIKey) error {
	ctx, span := s.Start(ctx, "store.CreateAPIKey", "")
	err := s.st.CreateAPIKey(ctx, k)
	End(span, err)
	return err
}

func (s *Store) GetAPIKey(ctx context.Context, projectID string, id string) (store.APIKey, error) {
	ctx, span := s.Start(ctx, "store.GetAPIKey", projectID)
	r0, err := s.st.GetAPIKey(ctx, projectID, id)
	End(span, err)
	return r0, err
}

func (s *Store) ListAPIKeys(ctx context.Context, projectID string) ([]store.APIKey, error) {
	ctx, span := s.Start(ctx, "store.ListAPIKeys", projectID)
	r0, err := s.st.ListAPIKeys(ctx, projectID)
	End(span, err)
	return r0, err
}

func (s *Store) ListAPIKeysPage(ctx context.Context, projectID string, namePrefix string, req paginate.Request) (paginate.Page[store.APIKey], error) {
	ctx, span := s.Start(ctx, "store.ListAPIKeysPage", projectID)
	r0, err := s.st.ListAPIKeysPage(ctx, projectID, namePrefix, req)
	End(span, err)
	return r0, err
}

func (s *Store) RevokeAPIKey(ctx context.Context, projectID string, id string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.RevokeAPIKey", projectID)
	err := s.st.RevokeAPIKey(ctx, projectID, id, at)
	End(span, err)
	return err
}

func (s *Store) RollAPIKey(ctx context.Context, projectID string, id string, next store.APIKey, revokeAt time.Time) (store.APIKey, error) {
	ctx, span := s.Start(ctx, "store.RollAPIKey", projectID)
	r0, err := s.st.RollAPIKey(ctx, projectID, id, next, revokeAt)
	End(span, err)
	return r0, err
}

func (s *Store) TouchAPIKey(ctx context.Context, projectID string, id string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.TouchAPIKey", projectID)
	err := s.st.TouchAPIKey(ctx, projectID, id, at)
	End(span, err)
	return err
}

func (s *Store) CreateSigningKey(ctx context.Context, k store.SigningKey) error {
	ctx, span := s.Start(ctx, "store.CreateSigningKey", "")
	err := s.st.CreateSigningKey(ctx, k)
	End(span, err)
	return err
}

func (s *Store) GetSigningKey(ctx context.Context, projectID string, id string) (store.SigningKey, error) {
	ctx, span := s.Start(ctx, "store.GetSigningKey", projectID)
	r0, err := s.st.GetSigningKey(ctx, projectID, id)
	End(span, err)
	return r0, err
}

func (s *Store) ActiveSigningKey(ctx context.Context, projectID string) (store.SigningKey, error) {
	ctx, span := s.Start(ctx, "store.ActiveSigningKey", projectID)
	r0, err := s.st.ActiveSigningKey(ctx, projectID)
	End(span, err)
	return r0, err
}

func (s *Store) ListSigningKeys(ctx context.Context, projectID string) ([]store.SigningKey, error) {
	ctx, span := s.Start(ctx, "store.ListSigningKeys", projectID)
	r0, err := s.st.ListSigningKeys(ctx, projectID)
	End(span, err)
	return r0, err
}

func (s *Store) RetireSigningKey(ctx context.Context, projectID string, id string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.RetireSigningKey", projectID)
	err := s.st.RetireSigningKey(ctx, projectID, id, at)
	End(span, err)
	return err
}

func (s *Store) CreateRefreshFamily(ctx context.Context, f store.RefreshFamily, passwordHash string) error {
	ctx, span := s.Start(ctx, "store.CreateRefreshFamily", "")
	err := s.st.CreateRefreshFamily(ctx, f, passwordHash)
	End(span, err)
	return err
}

func (s *Store) RotateRefresh(ctx context.Context, projectID string, familyID string, gen int64, p store.RotateParams) (store.Rotation, error) {
	ctx, span := s.Start(ctx, "store.RotateRefresh", projectID)
	r0, err := s.st.RotateRefresh(ctx, projectID, familyID, gen, p)
	End(span, err)
	return r0, err
}

func (s *Store) GetRefreshFamily(ctx context.Context, projectID string, familyID string) (store.RefreshFamily, error) {
	ctx, span := s.Start(ctx, "store.GetRefreshFamily", projectID)
	r0, err := s.st.GetRefreshFamily(ctx, projectID, familyID)
	End(span, err)
	return r0, err
}

func (s *Store) RevokeRefreshFamily(ctx context.Context, projectID string, familyID string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.RevokeRefreshFamily", projectID)
	err := s.st.RevokeRefreshFamily(ctx, projectID, familyID, at)
	End(span, err)
	return err
}

func (s *Store) ScheduleSessionEnd(ctx context.Context, projectID string, familyID string) error {
	ctx, span := s.Start(ctx, "store.ScheduleSessionEnd", projectID)
	err := s.st.ScheduleSessionEnd(ctx, projectID, familyID)
	End(span, err)
	return err
}

func (s *Store) PruneRefreshFamilies(ctx context.Context, before time.Time) (int, error) {
	ctx, span := s.Start(ctx, "store.PruneRefreshFamilies", "")
	r0, err := s.st.PruneRefreshFamilies(ctx, before)
	End(span, err)
	return r0, err
}

func (s *Store) ListRevocations(ctx context.Context, projectID string, req paginate.Request) (paginate.Page[store.Revocation], error) {
	ctx, span := s.Start(ctx, "store.ListRevocations", projectID)
	r0, err := s.st.ListRevocations(ctx, projectID, req)
	End(span, err)
	return r0, err
}

func (s *Store) NextScheduledRevocation(ctx context.Context, projectID string) (time.Time, error) {
	ctx, span := s.Start(ctx, "store.NextScheduledRevocation", projectID)
	r0, err := s.st.NextScheduledRevocation(ctx, projectID)
	End(span, err)
	return r0, err
}

func (s *Store) PruneSessionRevocations(ctx context.Context, before time.Time) (int, error) {
	ctx, span := s.Start(ctx, "store.PruneSessionRevocations", "")
	r0, err := s.st.PruneSessionRevocations(ctx, before)
	End(span, err)
	return r0, err
}

func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) error {
	ctx, span := s.Start(ctx, "store.AppendAudit", "")
	err := s.st.AppendAudit(ctx, e)
	End(span, err)
	return err
}

func (s *Store) ListAudit(ctx context.Context, projectID string, f store.AuditFilter, req paginate.Request) (paginate.Page[store.AuditEntry], error) {
	ctx, span := s.Start(ctx, "store.ListAudit", projectID)
	r0, err := s.st.ListAudit(ctx, projectID, f, req)
	End(span, err)
	return r0, err
}

func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int, error) {
	ctx, span := s.Start(ctx, "store.PruneAudit", "")
	r0, err := s.st.PruneAudit(ctx, before)
	End(span, err)
	return r0, err
}

func (s *Store) CreateConsoleSession(ctx context.Context, cs store.ConsoleSession) error {
	ctx, span := s.Start(ctx, "store.CreateConsoleSession", "")
	err := s.st.CreateConsoleSession(ctx, cs)
	End(span, err)
	return err
}

func (s *Store) GetConsoleSession(ctx context.Context, projectID string, id string) (store.ConsoleSession, error) {
	ctx, span := s.Start(ctx, "store.GetConsoleSession", projectID)
	r0, err := s.st.GetConsoleSession(ctx, projectID, id)
	End(span, err)
	return r0, err
}

func (s *Store) TouchConsoleSession(ctx context.Context, projectID string, id string, at time.Time) error {
	ctx, span := s.Start(ctx, "store.TouchConsoleSession", projectID)
	err := s.st.TouchConsoleSession(ctx, projectID, id, at)
	End(span, err)
	return err
}

func (s *Store) DeleteConsoleSession(ctx context.Context, projectID string, id string) error {
	ctx, span := s.Start(ctx, "store.DeleteConsoleSession", projectID)
	err := s.st.DeleteConsoleSession(ctx, projectID, id)
	End(span, err)
	return err
}

func (s *Store) PruneConsoleSessions(ctx context.Context, idleBefore time.Time, createdBefore time.Time) (int, error) {
	ctx, span := s.Start(ctx, "store.PruneConsoleSessions", "")
	r0, err := s.st.PruneConsoleSessions(ctx, idleBefore, createdBefore)
	End(span, err)
	return r0, err
}

func (s *Store) AddFailure(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	ctx, span := s.Start(ctx, "store.AddFailure", "")
	r0, r1, err := s.st.AddFailure(ctx, key, now, window)
	End(span, err)
	return r0, r1, err
}

func (s *Store) Failures(ctx context.Context, key string, now time.Time, window time.Duration) (int, time.Time, error) {
	ctx, span := s.Start(ctx, "store.Failures", "")
	r0, r1, err := s.st.Failures(ctx, key, now, window)
	End(span, err)
	return r0, r1, err
}

func (s *Store) FailuresOf(ctx context.Context, keys []string, now time.Time, window time.Duration) ([]store.ThrottleWindow, error) {
	ctx, span := s.Start(ctx, "store.FailuresOf", "")
	r0, err := s.st.FailuresOf(ctx, keys, now, window)
	End(span, err)
	return r0, err
}

func (s *Store) ClearFailures(ctx context.Context, key string) error {
	ctx, span := s.Start(ctx, "store.ClearFailures", "")
	err := s.st.ClearFailures(ctx, key)
	End(span, err)
	return err
}

func (s *Store) PruneThrottle(ctx context.Context, now time.Time) (int, error) {
	ctx, span := s.Start(ctx, "store.PruneThrottle", "")
	r0, err := s.st.PruneThrottle(ctx, now)
	End(span, err)
	return r0, err
}

func (s *Store) SetSetting(ctx context.Context, name string, value string) error {
	ctx, span := s.Start(ctx, "store.SetSetting", "")
	err := s.st.SetSetting(ctx, name, value)
	End(span, err)
	return err
}

func (s *Store) GetSetting(ctx context.Context, name string) (string, error) {
	ctx, span := s.Start(ctx, "store.GetSetting", "")
	r0, err := s.st.GetSetting(ctx, name)
	End(span, err)
	return r0, err
}
