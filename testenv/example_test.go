package testenv_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/admitd/admitd/testenv"
)

// A validating webhook that keeps passwords out of ConfigMaps, tested
// behind a real admitd. In a test, testenv.Start(t), env.ServeWebhook(t, h)
// and env.RegisterValidating(t, ...) do the same and clean up by
// themselves.
func Example() {
	env, err := testenv.New()
	if err != nil {
		log.Fatal(err)
	}
	defer env.Close()

	hook, err := env.StartWebhook(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "want an AdmissionReview", http.StatusBadRequest)
			return
		}
		var cm corev1.ConfigMap
		_ = json.Unmarshal(review.Request.Object.Raw, &cm)
		_, hasPassword := cm.Data["password"]
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: !hasPassword}
		if hasPassword {
			review.Response.Result = &metav1.Status{Message: "no passwords in ConfigMaps"}
		}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(&review)
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer hook.Close()

	ctx := context.Background()
	client := env.Client()
	cfg := hook.Validating("no-passwords.example.com", testenv.Rule("configmaps", admissionregistrationv1.Create, admissionregistrationv1.Update))
	if _, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		log.Fatal(err)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"password": "hunter2"}}
	_, err = client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	fmt.Println(err)
	// Output: admission webhook "no-passwords.example.com" denied the request: no passwords in ConfigMaps
}
